//===- CPAttrs.td - cp scheme and mask attributes ----------*- tablegen -*-===//
//
// `#cp.scheme` names how a cp.attention is parallelized; `#cp.mask` names
// the structured (predicate) mask evaluated on global positions.
//
//===----------------------------------------------------------------------===//

#ifndef CP_ATTRS_TD
#define CP_ATTRS_TD

include "cp/Dialect/CP/IR/CPDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def CP_SchemeKind : I32EnumAttr<"SchemeKind", "context-parallel scheme", [
    I32EnumAttrCase<"allgather", 0>,
    I32EnumAttrCase<"ulysses", 1>,
    I32EnumAttrCase<"hybrid", 2>,
    I32EnumAttrCase<"head_tail", 3>,
    I32EnumAttrCase<"ring", 4>,
    I32EnumAttrCase<"zigzag", 5>,
    I32EnumAttrCase<"automatic", 6, "auto">,
    I32EnumAttrCase<"plugin", 7>
  ]> {
  let cppNamespace = "::mlir::cp";
  let genSpecializedAttr = 0;
}

def CP_MaskKind : I32EnumAttr<"MaskKind", "structured attention mask", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"causal", 1>,
    I32EnumAttrCase<"sliding_window", 2>
  ]> {
  let cppNamespace = "::mlir::cp";
  let genSpecializedAttr = 0;
}

def CP_SequenceLayout : I32EnumAttr<"SequenceLayout",
    "how a sequence is sharded across the CP group", [
    I32EnumAttrCase<"contiguous", 0>,
    I32EnumAttrCase<"zigzag", 1>
  ]> {
  let cppNamespace = "::mlir::cp";
  let description = [{
    `contiguous`: rank `r` holds global rows `[r*L, (r+1)*L)`.
    `zigzag`: the sequence is cut in `2P` chunks of `L/2` rows and rank `r`
    holds chunks `r` and `2P-1-r`, in that order, so that causal work is the
    same on every rank.
  }];
}

def CP_QueryPlacement : I32EnumAttr<"QueryPlacement",
    "how the queries of a cp.attention are placed on the CP group", [
    I32EnumAttrCase<"sharded", 0>,
    I32EnumAttrCase<"replicated", 1>
  ]> {
  let cppNamespace = "::mlir::cp";
  let description = [{
    `sharded`: the queries are the process's shard of the one sequence Q,
    K and V share (self-attention), in the op's layout.
    `replicated`: every process holds the same `Lq` queries (a decode step,
    a few new tokens) and only K and V are sharded (a KV cache of `P * L`
    entries); query row `i` has global position `i`.
  }];
}

def CP_PartnerKind : I32EnumAttr<"PartnerKind", "exchange partner", [
    I32EnumAttrCase<"mirror", 0>
  ]> {
  let cppNamespace = "::mlir::cp";
}

class CP_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<CP_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def CP_SchemeAttr : CP_Attr<"Scheme", "scheme"> {
  let summary = "How a cp.attention is parallelized over its CP group";
  let description = [{
    One of the built-in schemes `allgather`, `ulysses`, `hybrid(u)`,
    `head_tail`, `ring`, `zigzag` or `auto`, or the name of a scheme a
    plugin registered with the dialect (kind `plugin`, see
    docs/SchemePlugins.md), with an optional integer parameter `name(n)`
    whose meaning is the plugin's. `hybrid` carries its Ulysses degree `u`,
    the size of the inner (all-to-all) axis of the `(P/u) x u` process
    grid; no other built-in scheme takes a parameter.

    A plugin scheme's name is looked up when the attribute is parsed or
    built: IR naming one parses only where its plugin is loaded.

    ```mlir
    #cp.scheme<allgather>
    #cp.scheme<hybrid(2)>
    #cp.scheme<head_chunked_allgather(2)>  // with its plugin loaded
    ```
  }];
  let parameters = (ins
    EnumParameter<CP_SchemeKind>:$kind,
    DefaultValuedParameter<"int64_t", "0">:$ulysses_degree,
    StringRefParameter<"a plugin scheme's name", "\"\"">:$name
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "SchemeKind":$kind, CArg<"int64_t", "0">:$ulysses_degree), [{
      return $_get($_ctxt, kind, ulysses_degree, "");
    }]>
  ];
  let extraClassDeclaration = [{
    bool isPlugin() const { return getKind() == SchemeKind::plugin; }
    /// The integer in `name(n)`: hybrid's Ulysses degree, or a plugin
    /// scheme's parameter (0 when absent).
    int64_t getParameter() const { return getUlyssesDegree(); }
    /// The scheme's name as written: the built-in keyword or the plugin
    /// scheme's name (without the parameter).
    ::llvm::StringRef getSchemeName() const;
    /// A plugin scheme `name` or `name(parameter)`.
    static SchemeAttr getPlugin(::mlir::MLIRContext *context,
                                ::llvm::StringRef name, int64_t parameter);
  }];
}

def CP_MaskAttr : CP_Attr<"Mask", "mask"> {
  let summary = "Structured mask evaluated on global query/key positions";
  let description = [{
    `none`, `causal` (key `kj` visible to query `qi` iff `kj <= qi`) or
    `sliding_window(W)` (visible iff `qi - W < kj <= qi`). Positions are
    global: a local row `i` is at `q_offset + i`, a local column `j` at
    `kv_offset + j`. Such a mask is a predicate, never a materialized tensor.

    ```mlir
    #cp.mask<causal>
    #cp.mask<sliding_window(128)>
    ```
  }];
  let parameters = (ins
    EnumParameter<CP_MaskKind>:$kind,
    DefaultValuedParameter<"int64_t", "0">:$window
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "MaskKind":$kind), [{
      return $_get($_ctxt, kind, 0);
    }]>
  ];
  let constBuilderCall = "::mlir::cp::MaskAttr::get($_builder.getContext(), $0)";
  let extraClassDeclaration = [{
    bool isNone() const { return getKind() == MaskKind::none; }
  }];
}

#endif // CP_ATTRS_TD
