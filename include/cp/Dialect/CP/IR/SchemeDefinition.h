//===- SchemeDefinition.h - what a named CP scheme provides -----*- C++ -*-===//
//
// A context-parallel scheme, built in or from a plugin, is one
// SchemeDefinition registered with the cp dialect under its name: its
// constraints, the sequence layout it computes in, the bytes it sends, its
// rewrite of cp.attention (and of cp.attention_grad, when it has a
// backward) and its cost estimate. cp-apply-scheme, cp-choose-scheme, the
// cp.attention verifier and the traffic tables reach every scheme through
// this interface only; docs/SchemePlugins.md shows a plugin.
//
// The interface is declared here, in the IR layer, because the verifier
// checks constraints. The rewrite and cost hooks name Transforms and
// Analysis types by declaration only: the IR never calls them.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_IR_SCHEMEDEFINITION_H
#define CP_DIALECT_CP_IR_SCHEMEDEFINITION_H

#include "cp/Dialect/CP/IR/CPDialect.h"
#include "cp/Dialect/CP/IR/SchemeConstraints.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <optional>
#include <string>

namespace mlir {
namespace cp {

class SchemeBuilder;
class GradSchemeBuilder;
struct AttentionProblem;
struct MachineModel;
struct SchemeEstimate;
struct GradElementBytes;

/// The provider name of the schemes cp itself defines.
constexpr llvm::StringLiteral kBuiltinSchemeProvider = "cp";

class SchemeDefinition {
public:
  /// `name`: how ops and options spell the scheme (an identifier that is
  /// not a built-in keyword). `provider`: who defines it, named in every
  /// diagnostic about it (a plugin's name; "cp" for the built-ins).
  SchemeDefinition(llvm::StringRef name, llvm::StringRef provider)
      : name(name.str()), provider(provider.str()) {}
  virtual ~SchemeDefinition();

  llvm::StringRef getName() const { return name; }
  llvm::StringRef getProvider() const { return provider; }
  bool isBuiltin() const { return provider == kBuiltinSchemeProvider; }
  /// "scheme 'name' (plugin 'provider')" or "scheme 'name'" for a built-in:
  /// how diagnostics introduce the scheme.
  std::string describe() const;

  /// Whether `name(n)` is accepted, and what is wrong with `parameter`
  /// (std::nullopt when it is valid). The default takes no parameter.
  virtual std::optional<std::string> checkParameter(int64_t parameter) const;

  /// The first constraint `shape` violates, as a sentence with the numbers
  /// and a fix; std::nullopt when the scheme applies. Sizes may be
  /// ShapedType::kDynamic: a rule over an unknown size is not checked.
  virtual std::optional<std::string>
  findViolation(SchemeAttr scheme, const AttentionShape &shape) const = 0;

  /// The sequence layout the rewrite computes in; operands in the other
  /// layout go through cp.relayout around it.
  virtual SequenceLayout getLayout(SchemeAttr scheme) const {
    return SequenceLayout::contiguous;
  }

  /// Bytes the busiest rank sends in the forward, for operands already in
  /// getLayout() (relayout traffic is added by the caller).
  virtual int64_t bytesSentPerRank(SchemeAttr scheme,
                                   const AttentionShape &shape,
                                   int64_t elementBytes, MaskAttr mask,
                                   bool withLse) const = 0;
  /// The same for the backward; only asked when hasBackward().
  virtual int64_t backwardBytesSentPerRank(SchemeAttr scheme,
                                           const AttentionShape &shape,
                                           const GradElementBytes &bytes,
                                           MaskAttr mask) const {
    return 0;
  }

  /// Replaces `builder.op` (a cp.attention with static shapes whose
  /// constraints hold): builds collectives and local attentions before it
  /// and ends with `builder.finish(...)`. cp-apply-scheme erases the op
  /// after a success. A failure must have emitted a diagnostic.
  virtual LogicalResult rewrite(SchemeBuilder &builder) const = 0;

  /// Whether rewriteGrad is implemented; cp-apply-scheme rejects a
  /// cp.attention_grad under a scheme without one.
  virtual bool hasBackward() const { return false; }
  /// Whether rewrite (and rewriteGrad) honour `sinks`: give each local
  /// attention the sinks of its heads (builder.sinks, sliced as the heads
  /// are), and each query row's sinks to exactly one partial that is merged.
  /// cp-apply-scheme rejects an op with sinks under a scheme without this.
  virtual bool supportsSinks() const { return false; }
  /// Replaces `builder.op` (a cp.attention_grad), ending with
  /// `builder.finish(...)`.
  virtual LogicalResult rewriteGrad(GradSchemeBuilder &builder) const {
    return failure();
  }

  /// Appends this scheme's estimates for `problem` on `machine` (one per
  /// parameter worth considering) for cp-choose-scheme; a scheme that adds
  /// none is never chosen by `scheme = auto`. SchemeCost.h has the helpers.
  virtual void estimate(MLIRContext *context, const AttentionProblem &problem,
                        const MachineModel &machine,
                        llvm::SmallVectorImpl<SchemeEstimate> &out) const {}

private:
  std::string name;
  std::string provider;
};

/// Whether `name` can name a scheme: an identifier (letters, digits, '_'
/// and '.', not starting with a digit or '.').
bool isValidSchemeName(llvm::StringRef name);

/// Registers `definition` with the cp dialect of `context` (which is
/// loaded). Fails with a diagnostic when the name is not an identifier, is
/// a built-in keyword other than the built-in registering itself, or is
/// taken: two providers of one name would make IR mean different things.
LogicalResult registerScheme(MLIRContext *context,
                             std::unique_ptr<SchemeDefinition> definition);

/// The built-in definition registered as `keyword`; null when none is.
const SchemeDefinition *lookupBuiltinScheme(MLIRContext *context,
                                            llvm::StringRef keyword);
/// The plugin scheme registered as `name`; null when none is.
const SchemeDefinition *lookupPluginScheme(MLIRContext *context,
                                           llvm::StringRef name);
/// What is wrong with the plugin scheme `name(parameter)` in `context`: no
/// scheme of that name is registered (unknownSchemeMessage), or its
/// definition rejects the parameter; std::nullopt when it is valid.
std::optional<std::string> checkPluginScheme(MLIRContext *context,
                                             llvm::StringRef name,
                                             int64_t parameter);
/// Every registered definition, built-ins first, each group in order of
/// registration.
llvm::SmallVector<const SchemeDefinition *>
registeredSchemes(MLIRContext *context);

/// "unknown scheme 'x'; expected allgather, ..., auto or a scheme a loaded
/// plugin registers (registered: a, b)": one message for every parser.
std::string unknownSchemeMessage(MLIRContext *context, llvm::StringRef name);

} // namespace cp
} // namespace mlir

#endif // CP_DIALECT_CP_IR_SCHEMEDEFINITION_H
