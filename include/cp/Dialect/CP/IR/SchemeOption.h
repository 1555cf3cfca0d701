//===- SchemeOption.h - a scheme as a pass option ---------------*- C++ -*-===//
//
// The `scheme` option of cp's passes and pipelines (`ring`, `hybrid(2)`,
// `auto`) is parsed once, when the option is set, into this typed value:
// pipelines hand it on to the passes they build, and each pass turns it into
// a #cp.scheme with resolve. The keyword rules are those of #cp.scheme's own
// syntax (one parser, in CPAttrs.cpp). Text that names no scheme is kept
// with the reason, and the pass given it reports that as a diagnostic: an
// option parser can only print to stderr, outside MLIR's diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef CP_DIALECT_CP_IR_SCHEMEOPTION_H
#define CP_DIALECT_CP_IR_SCHEMEOPTION_H

#include "cp/Dialect/CP/IR/CPDialect.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir {
namespace cp {

class SchemeOption {
public:
  SchemeOption() = default;
  SchemeOption(SchemeKind kind, int64_t ulyssesDegree = 0)
      : kind(kind), ulyssesDegree(ulyssesDegree) {}

  /// A plugin scheme's name (and parameter), resolved against the schemes
  /// registered in the context that resolves the option.
  static SchemeOption plugin(llvm::StringRef name, int64_t parameter) {
    SchemeOption option(SchemeKind::plugin, parameter);
    option.pluginName = name.str();
    return option;
  }
  bool isPlugin() const { return kind == SchemeKind::plugin; }
  /// The kind named (none when empty or invalid).
  std::optional<SchemeKind> getKind() const { return kind; }

  /// `text` as a scheme ("" gives the empty option); an invalid option
  /// that keeps `text` and the reason when it names none.
  static SchemeOption parse(llvm::StringRef text);

  /// No scheme given: each op keeps its own.
  bool empty() const { return !kind && !invalid; }
  bool isAuto() const { return kind == SchemeKind::automatic; }
  /// The scheme as an attribute (null when empty). For text that names no
  /// scheme (or a plugin scheme `context` has not registered), emits
  /// "<user>: invalid scheme option '<text>': <reason>" and fails.
  FailureOr<SchemeAttr> resolve(MLIRContext *context,
                                llvm::StringRef user) const;

  bool operator==(const SchemeOption &other) const {
    return kind == other.kind && ulyssesDegree == other.ulyssesDegree &&
           pluginName == other.pluginName && text == other.text;
  }
  bool operator!=(const SchemeOption &other) const { return !(*this == other); }

  /// As written in op syntax and on the command line; "" when empty.
  friend llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                       const SchemeOption &scheme);

private:
  std::optional<SchemeKind> kind;
  int64_t ulyssesDegree = 0;
  std::string pluginName;
  /// For an invalid option: the text given and why it names no scheme.
  std::string text;
  std::optional<std::string> invalid;
};

llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                              const SchemeOption &scheme);


} // namespace cp
} // namespace mlir

namespace llvm {
namespace cl {
/// Parses `--...scheme=<text>` into a SchemeOption (never fails: see
/// SchemeOption::resolve).
template <>
class parser<mlir::cp::SchemeOption>
    : public basic_parser<mlir::cp::SchemeOption> {
public:
  parser(Option &option) : basic_parser(option) {}
  bool parse(Option &option, StringRef argName, StringRef arg,
             mlir::cp::SchemeOption &value);
  StringRef getValueName() const override { return "scheme"; }
  void printOptionDiff(const Option &option,
                       const mlir::cp::SchemeOption &value,
                       const OptVal &defaultValue, size_t globalWidth) const;
  void anchor() override;
};
} // namespace cl
} // namespace llvm

#endif // CP_DIALECT_CP_IR_SCHEMEOPTION_H
