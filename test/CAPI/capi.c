/*===- capi.c - the cp C API, exercised from C ------------------------------===
 *
 * RUN: cp-capi-test %S/../Transforms/Inputs/host-p4.profile 2>&1 | FileCheck %s
 *
 * Built as cp-capi-test against libCPMLIRCAPI.so only (plain C, no C++).
 * The CHECK lines are FileCheck patterns and must stay whole lines, hence
 * clang-format off.
 *===----------------------------------------------------------------------===*/

// clang-format off
#include "cp-c/AttentionLayer.h"
#include "cp-c/Dialect.h"
#include "cp-c/Driver.h"
#include "cp-c/Passes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>
#include <string.h>

/* Tags that say which call a diagnostic came from. */
static char kParse[] = "parse", kVerify[] = "verify", kPipeline[] = "pipeline",
            kLayer[] = "layer";

static void printChunk(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static void printDiagnostic(MlirStringRef text, void *userData) {
  fprintf(stdout, "%s: ", (const char *)userData);
  fwrite(text.data, 1, text.length, stdout);
  fputc('\n', stdout);
}

static void printAttribute(MlirAttribute attr) {
  mlirAttributePrint(attr, printChunk, NULL);
  fputc('\n', stdout);
}

/* The dialect handle registers cp into a plain upstream context. */
static void testDialectHandle(void) {
  MlirContext ctx = mlirContextCreate();
  MlirDialectHandle cp = mlirGetDialectHandle__cp__();
  MlirStringRef ns = mlirDialectHandleGetNamespace(cp);
  printf("namespace: %.*s\n", (int)ns.length, ns.data);
  mlirDialectHandleRegisterDialect(cp, ctx);
  MlirDialect dialect = mlirContextGetOrLoadDialect(ctx, ns);
  printf("loaded: %d\n", !mlirDialectIsNull(dialect));
  mlirContextDestroy(ctx);
}
// CHECK-LABEL: namespace: cp
// CHECK-NEXT: loaded: 1

/* Attribute builders and getters. */
static void testAttributes(MlirContext ctx) {
  MlirAttribute hybrid = cpSchemeAttrGet(ctx, CpSchemeHybrid, 2);
  printAttribute(hybrid);
  printf("is scheme: %d, is mask: %d, kind: %d, u: %lld\n",
         cpAttributeIsAScheme(hybrid), cpAttributeIsAMask(hybrid),
         (int)cpSchemeAttrGetKind(hybrid),
         (long long)cpSchemeAttrGetUlyssesDegree(hybrid));
  MlirAttribute window = cpMaskAttrGet(ctx, CpMaskSlidingWindow, 128);
  printAttribute(window);
  printf("kind: %d, window: %lld\n", (int)cpMaskAttrGetKind(window),
         (long long)cpMaskAttrGetWindow(window));
  printAttribute(cpSchemeAttrGet(ctx, CpSchemeAuto, 0));
  printAttribute(cpMaskAttrGet(ctx, CpMaskCausal, 0));
}
// CHECK-LABEL: #cp.scheme<hybrid(2)>
// CHECK-NEXT: is scheme: 1, is mask: 0, kind: 2, u: 2
// CHECK-NEXT: #cp.mask<sliding_window(128)>
// CHECK-NEXT: kind: 2, window: 128
// CHECK-NEXT: #cp.scheme<auto>
// CHECK-NEXT: #cp.mask<causal>

/* An invalid combination gives a null attribute and a diagnostic. */
static void reportToStdout(MlirDiagnostic diag, void *userData) {
  (void)userData;
  printf("diagnostic: ");
  mlirDiagnosticPrint(diag, printChunk, NULL);
  printf("\n");
}
static MlirLogicalResult handleDiagnostic(MlirDiagnostic diag, void *userData) {
  reportToStdout(diag, userData);
  return mlirLogicalResultSuccess();
}
static void testInvalidAttributes(MlirContext ctx) {
  MlirDiagnosticHandlerID id =
      mlirContextAttachDiagnosticHandler(ctx, handleDiagnostic, NULL, NULL);
  printf("hybrid(1) null: %d\n",
         mlirAttributeIsNull(cpSchemeAttrGet(ctx, CpSchemeHybrid, 1)));
  printf("window(0) null: %d\n",
         mlirAttributeIsNull(cpMaskAttrGet(ctx, CpMaskSlidingWindow, 0)));
  mlirContextDetachDiagnosticHandler(ctx, id);
}
// CHECK-LABEL: diagnostic: hybrid needs a Ulysses degree u >= 2, got u = 1
// CHECK-NEXT: hybrid(1) null: 1
// CHECK-NEXT: diagnostic: sliding_window needs a positive window size W
// CHECK-NEXT: window(0) null: 1

/* Parse, run a named pipeline, print. */
static const char *kLayerSource =
    "shard.grid @cp(shape = 4)\n"
    "func.func @attention(%q: tensor<1x8x16x32xf32>, %k: "
    "tensor<1x4x16x32xf32>,\n"
    "                     %v: tensor<1x4x16x32xf32>) -> tensor<1x8x16x32xf32> "
    "{\n"
    "  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal\n"
    "      : tensor<1x8x16x32xf32>, tensor<1x4x16x32xf32>, "
    "tensor<1x4x16x32xf32>\n"
    "      -> tensor<1x8x16x32xf32>\n"
    "  return %o : tensor<1x8x16x32xf32>\n"
    "}\n";

static void testParseRunPrint(MlirContext ctx) {
  MlirModule module = cpModuleParse(
      ctx, mlirStringRefCreateFromCString(kLayerSource),
      mlirStringRefCreateFromCString("layer.mlir"), printDiagnostic, kParse);
  printf("parsed: %d\n", !mlirModuleIsNull(module));
  printf("verified: %d\n", mlirLogicalResultIsSuccess(cpModuleVerify(
                               module, printDiagnostic, kVerify)));
  MlirLogicalResult ran =
      cpModuleRunPipeline(module,
                          mlirStringRefCreateFromCString(
                              "cp-apply-scheme{scheme=ulysses},canonicalize"),
                          printDiagnostic, kPipeline);
  printf("ran: %d\n", mlirLogicalResultIsSuccess(ran));
  cpModulePrint(module, false, printChunk, NULL);
  mlirModuleDestroy(module);
}
// CHECK-LABEL: parsed: 1
// CHECK-NEXT: verified: 1
// CHECK-NEXT: ran: 1
// CHECK: func.func @attention
// CHECK: cp.all_to_all %{{.*}} on @cp grid_axes = [0] split_axis = 1 concat_axis = 2
// CHECK: cp.local_attention {{.*}} mask = causal
// CHECK-SAME: cp.scheme = #cp.scheme<ulysses>
// CHECK: cp.all_to_all %{{.*}} split_axis = 2 concat_axis = 1

/* `auto` through a pipeline: cp-apply-scheme runs cp-choose-scheme on its
 * machine option, as the lowering pipelines do: a preset, or the path of a
 * machine profile (argv[1]). */
static void testAutoScheme(MlirContext ctx, const char *profile) {
  const char *machines[] = {"h200-nvlink", "host-mpi", profile};
  for (int i = 0; i < 3; ++i) {
    MlirModule module = cpModuleParse(
        ctx, mlirStringRefCreateFromCString(kLayerSource),
        mlirStringRefCreateFromCString("layer.mlir"), printDiagnostic, kParse);
    char pipeline[4096];
    snprintf(pipeline, sizeof pipeline,
             "cp-apply-scheme{scheme=auto machine=%s}", machines[i]);
    MlirLogicalResult ran = cpModuleRunPipeline(
        module, mlirStringRefCreateFromCString(pipeline), printDiagnostic,
        kPipeline);
    printf("auto on %s ran: %d\n", i == 2 ? "the profile" : machines[i],
           mlirLogicalResultIsSuccess(ran));
    cpModulePrint(module, false, printChunk, NULL);
    mlirModuleDestroy(module);
  }
}
// CHECK-LABEL: auto on h200-nvlink ran: 1
// CHECK-NOT: cp.attention %
// CHECK: cp.local_attention {{.*}} cp.scheme = #cp.scheme<hybrid(2)>
// CHECK-LABEL: auto on host-mpi ran: 1
// CHECK-NOT: cp.attention %
// CHECK: cp.local_attention {{.*}} cp.scheme = #cp.scheme<hybrid(2)>
// CHECK-LABEL: auto on the profile ran: 1
// CHECK-NOT: cp.attention %
// CHECK: cp.local_attention {{.*}} cp.scheme = #cp.scheme<

/* Failures come back as diagnostics with locations, never on stderr. */
static void testErrors(MlirContext ctx) {
  MlirModule bad = cpModuleParse(
      ctx, mlirStringRefCreateFromCString("func.func @f( {"),
      mlirStringRefCreateFromCString("bad.mlir"), printDiagnostic, kParse);
  printf("bad parsed: %d\n", !mlirModuleIsNull(bad));

  MlirModule module = cpModuleParse(
      ctx, mlirStringRefCreateFromCString(kLayerSource),
      mlirStringRefCreateFromCString("layer.mlir"), printDiagnostic, kParse);
  cpModuleRunPipeline(
      module,
      mlirStringRefCreateFromCString("cp-apply-scheme{scheme=hybrid(3)}"),
      printDiagnostic, kPipeline);
  cpModuleRunPipeline(module, mlirStringRefCreateFromCString("no-such-pass"),
                      printDiagnostic, kPipeline);
  mlirModuleDestroy(module);
}
// CHECK-LABEL: parse: bad.mlir:1:14: error: expected non-function type
// CHECK-NEXT: bad parsed: 0
// CHECK-NEXT: pipeline: layer.mlir:4:8: error: 'cp.attention' op cannot use scheme #cp.scheme<hybrid(3)>: hybrid needs the CP group size P (4) divisible by the Ulysses degree u (3); choose u dividing P
// CHECK-NEXT: pipeline: error: invalid pass pipeline 'no-such-pass': {{.*}}'no-such-pass' does not refer to a registered pass

/* The layer builder: shapes in, verified IR out. */
static void testAttentionLayer(MlirContext ctx) {
  CpAttentionLayerSpec spec = cpAttentionLayerSpecGetDefault(ctx);
  spec.heads = 8;
  spec.kvHeads = 2;
  spec.seqLen = 64;
  spec.headDim = 16;
  spec.valueDim = 16;
  spec.groupSize = 4;
  spec.elementType = mlirBF16TypeGet(ctx);
  spec.mask = cpMaskAttrGet(ctx, CpMaskCausal, 0);
  spec.scheme = cpSchemeAttrGet(ctx, CpSchemeHeadTail, 0);
  spec.explicitMask = CpExplicitMaskBool;
  MlirModule layer = cpAttentionLayerBuild(ctx, &spec, printDiagnostic, kLayer);
  cpModulePrint(layer, false, printChunk, NULL);
  mlirModuleDestroy(layer);

  spec.seqLen = 66;
  layer = cpAttentionLayerBuild(ctx, &spec, printDiagnostic, kLayer);
  printf("S=66 built: %d\n", !mlirModuleIsNull(layer));
  spec.seqLen =
      72; /* L = 18: even, fine for head_tail; ulysses needs Hkv % P */
  spec.scheme = cpSchemeAttrGet(ctx, CpSchemeUlysses, 0);
  layer = cpAttentionLayerBuild(ctx, &spec, printDiagnostic, kLayer);
  printf("ulysses built: %d\n", !mlirModuleIsNull(layer));
}
// CHECK-LABEL: shard.grid @cp(shape = 4)
// CHECK: func.func @attention(%{{.*}}: tensor<1x8x16x16xbf16>, %{{.*}}: tensor<1x2x16x16xbf16>, %{{.*}}: tensor<1x2x16x16xbf16>, %{{.*}}: tensor<64x64xi1>) -> tensor<1x8x16x16xbf16>
// CHECK: cp.attention {{.*}} explicit_mask {{.*}} on @cp grid_axes = [0] mask = causal scheme = head_tail
// CHECK: layer: attention layer: the sequence length S = 66 is not divisible by the CP group size P = 4; pad S to a multiple of 4
// CHECK-NEXT: S=66 built: 0
// CHECK-NEXT: layer: attention layer: 'cp.attention' op cannot use scheme #cp.scheme<ulysses>: ulysses needs Hkv (2) divisible by the CP group size (4)
// CHECK-NEXT: ulysses built: 0

/* The generated per-pass entry points, through the upstream pass manager:
 * the scheme comes from the op's attribute. */
static void testGeneratedPassEntryPoints(MlirContext ctx) {
  CpAttentionLayerSpec spec = cpAttentionLayerSpecGetDefault(ctx);
  spec.heads = 4;
  spec.kvHeads = 4;
  spec.seqLen = 32;
  spec.headDim = 8;
  spec.valueDim = 8;
  spec.groupSize = 2;
  spec.scheme = cpSchemeAttrGet(ctx, CpSchemeAllGather, 0);
  MlirModule layer = cpAttentionLayerBuild(ctx, &spec, printDiagnostic, kLayer);
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  mlirPassManagerAddOwnedPass(pm, mlirCreateCPSchemesApplySchemePass());
  MlirLogicalResult ran =
      mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(layer));
  printf("generated pass ran: %d\n", mlirLogicalResultIsSuccess(ran));
  cpModulePrint(layer, false, printChunk, NULL);
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(layer);
}
// CHECK-LABEL: generated pass ran: 1
// CHECK: cp.all_gather %{{.*}} on @cp grid_axes = [0] gather_axis = 2 : tensor<1x4x16x8xf32> -> tensor<1x4x32x8xf32>

/* A training step: the layer takes dO and returns o and the f32
 * gradients; the scheme is applied to the forward and the backward. */
static void testTrainingLayer(MlirContext ctx) {
  CpAttentionLayerSpec spec = cpAttentionLayerSpecGetDefault(ctx);
  spec.heads = 4;
  spec.kvHeads = 2;
  spec.seqLen = 32;
  spec.headDim = 8;
  spec.valueDim = 8;
  spec.groupSize = 2;
  spec.elementType = mlirBF16TypeGet(ctx);
  spec.mask = cpMaskAttrGet(ctx, CpMaskCausal, 0);
  spec.scheme = cpSchemeAttrGet(ctx, CpSchemeAllGather, 0);
  spec.training = 1;
  MlirModule layer = cpAttentionLayerBuild(ctx, &spec, printDiagnostic, kLayer);
  printf("training built: %d\n", !mlirModuleIsNull(layer));
  cpModulePrint(layer, false, printChunk, NULL);
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  mlirPassManagerAddOwnedPass(pm, mlirCreateCPSchemesApplySchemePass());
  MlirLogicalResult ran =
      mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(layer));
  printf("training scheme applied: %d\n", mlirLogicalResultIsSuccess(ran));
  cpModulePrint(layer, false, printChunk, NULL);
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(layer);
}
// CHECK-LABEL: training built: 1
// CHECK: func.func @attention(%{{.*}}: tensor<1x4x16x8xbf16>, %{{.*}}: tensor<1x2x16x8xbf16>, %{{.*}}: tensor<1x2x16x8xbf16>, %{{.*}}: tensor<1x4x16x8xbf16>) -> (tensor<1x4x16x8xbf16>, tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>)
// CHECK: %[[O:.*]], %[[LSE:.*]] = cp.attention {{.*}} mask = causal scheme = allgather : {{.*}} -> tensor<1x4x16x8xbf16>, tensor<1x4x16xf32>
// CHECK: cp.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %[[O]], %[[LSE]], %{{.*}} on @cp grid_axes = [0] mask = causal scheme = allgather
// CHECK-LABEL: training scheme applied: 1
// CHECK: cp.local_attention {{.*}}cp.scheme = #cp.scheme<allgather>
// CHECK: cp.local_attention_grad {{.*}}cp.scheme = #cp.scheme<allgather>
// CHECK: cp.reduce_scatter

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: cp-capi-test MACHINE-PROFILE\n");
    return 2;
  }
  testDialectHandle();
  MlirContext ctx = cpContextCreate();
  testAttributes(ctx);
  testInvalidAttributes(ctx);
  testParseRunPrint(ctx);
  testAutoScheme(ctx, argv[1]);
  testErrors(ctx);
  testAttentionLayer(ctx);
  testGeneratedPassEntryPoints(ctx);
  testTrainingLayer(ctx);
  mlirContextDestroy(ctx);
  return 0;
}
