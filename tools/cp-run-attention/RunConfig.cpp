//===- RunConfig.cpp - cp-run-attention's command line --------------------===//
//
// Parses the shape, the cases (NAME=MASK) and the options, and refuses
// combinations the checks cannot run, so that no case fails for a reason
// that is not the compiled program's.
//
//===----------------------------------------------------------------------===//

#include "RunConfig.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace cp::run {
namespace {

[[noreturn]] void usageError(const std::string &message) {
  std::fprintf(stderr, "cp-run-attention: %s\n", message.c_str());
  std::fprintf(
      stderr,
      "usage: cp-run-attention --P N --B N --H N --Hkv N --S N --D N --Dv N\n"
      "         [--dtype f32|f16|bf16] --case NAME=MASK [--case ...]\n"
      "         [--layout contiguous|zigzag]\n"
      "         [--grad-dtype f32|storage]\n"
      "         (--emit-mlir [--scheme S] | --lib FILE.so [--tol X] [--grad-tol X]\n"
      "          [--expect-bytes N] [--repeat N] [--warmup N]\n"
      "          [--device cpu|gpu])\n"
      "  --repeat N: timed calls (default 1), after --warmup N untimed ones\n"
      "        (default 1, or $CP_RUN_ATTENTION_WARMUP: the test suite sets\n"
      "        0, since its checks need one call and no timing)\n"
      "  MASK: none | causal | window:W, optionally +explicit-global,\n"
      "        +explicit-local or +bias-global (e.g. causal+explicit-global),\n"
      "        and regions: +document (mask_mod on segment ids),\n"
      "        +causal-mod (causal as a mask_mod), +softcap:C, +alibi,\n"
      "        +sinks (an [H] attention-sink operand; with +grad or +train\n"
      "        its gradient is checked too)\n"
      "        and +lse to check the log-sum-exp too (--P 1: the IR is then\n"
      "        cp.local_attention itself); +grad checks the backward given\n"
      "        the reference output, +train the forward chained into it\n"
      "        (both check dq, dk, dv; +train needs --scheme); +stacked\n"
      "        feeds the output to a second cp.attention as its queries\n"
      "        (needs D = Dv)\n");
  std::exit(2);
}

Case parseCase(const std::string &text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    usageError("--case expects NAME=MASK, got '" + text + "'");
  Case c;
  c.name = text.substr(0, eq);
  std::stringstream parts(text.substr(eq + 1));
  std::string part;
  while (std::getline(parts, part, '+')) {
    if (part == "none" || part == "causal") {
      c.structured = part;
    } else if (part.rfind("window:", 0) == 0) {
      c.structured = "window";
      c.window = std::atoll(part.c_str() + 7);
      if (c.window <= 0)
        usageError("window:W needs W > 0 in '" + text + "'");
    } else if (part == "explicit-global") {
      c.explicitMask = Case::Explicit::globalBool;
    } else if (part == "explicit-local") {
      c.explicitMask = Case::Explicit::localBool;
    } else if (part == "bias-global") {
      c.explicitMask = Case::Explicit::globalBias;
    } else if (part == "document") {
      c.document = true;
    } else if (part == "causal-mod") {
      c.causalModRegion = true;
    } else if (part.rfind("softcap:", 0) == 0) {
      c.softcap = std::atof(part.c_str() + 8);
      if (c.softcap <= 0)
        usageError("softcap:C needs C > 0 in '" + text + "'");
    } else if (part == "alibi") {
      c.alibi = true;
    } else if (part == "sinks") {
      c.sinks = true;
    } else if (part == "lse") {
      c.lse = true;
    } else if (part == "grad") {
      c.grad = true;
    } else if (part == "train") {
      c.grad = c.train = true;
    } else if (part == "stacked") {
      c.stacked = true;
    } else if (part == "merge") {
      c.merge = true;
    } else if (part.rfind("at:", 0) == 0) {
      if (std::sscanf(part.c_str(), "at:%lld:%lld",
                      reinterpret_cast<long long *>(&c.qOffset),
                      reinterpret_cast<long long *>(&c.kvOffset)) != 2)
        usageError("at:QO:KO needs two offsets in '" + text + "'");
    } else {
      usageError("unknown mask part '" + part + "' in '" + text + "'");
    }
  }
  return c;
}

} // namespace

Config parseArgs(int argc, char **argv) {
  Config c;
  if (const char *warmup = std::getenv("CP_RUN_ATTENTION_WARMUP"))
    c.warmup = std::atoi(warmup);
  auto number = [&](int &i) {
    if (i + 1 >= argc)
      usageError(std::string(argv[i]) + " needs a value");
    return std::atoll(argv[++i]);
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--P")
      c.p = number(i);
    else if (a == "--B")
      c.batch = number(i);
    else if (a == "--H")
      c.heads = number(i);
    else if (a == "--Hkv")
      c.kvHeads = number(i);
    else if (a == "--S")
      c.seq = number(i);
    else if (a == "--D")
      c.headDim = number(i);
    else if (a == "--Dv")
      c.valueDim = number(i);
    else if (a == "--repeat")
      c.repeat = static_cast<int>(number(i));
    else if (a == "--warmup")
      c.warmup = static_cast<int>(number(i));
    else if (a == "--expect-bytes")
      c.expectBytes = number(i);
    else if (a == "--emit-mlir")
      c.emitMlir = true;
    else if (a == "--device" && i + 1 < argc) {
      std::string d = argv[++i];
      if (d != "cpu" && d != "gpu")
        usageError("--device must be cpu or gpu, got '" + d + "'");
      c.gpu = d == "gpu";
    } else if (a == "--case" && i + 1 < argc)
      c.cases.push_back(parseCase(argv[++i]));
    else if (a == "--lib" && i + 1 < argc)
      c.lib = argv[++i];
    else if (a == "--scheme" && i + 1 < argc)
      c.scheme = argv[++i];
    else if (a == "--layout" && i + 1 < argc) {
      std::string layout = argv[++i];
      if (layout != "contiguous" && layout != "zigzag")
        usageError("--layout must be contiguous or zigzag, got '" + layout +
                   "'");
      c.zigzag = layout == "zigzag";
    } else if (a == "--grad-dtype" && i + 1 < argc) {
      std::string g = argv[++i];
      if (g != "f32" && g != "storage")
        usageError("--grad-dtype must be f32 or storage, got '" + g + "'");
      c.gradInStorageType = g == "storage";
    } else if (a == "--grad-tol" && i + 1 < argc)
      c.gradTolerance = std::atof(argv[++i]);
    else if (a == "--tol" && i + 1 < argc)
      c.tolerance = std::atof(argv[++i]);
    else if (a == "--dtype" && i + 1 < argc) {
      std::string t = argv[++i];
      if (t == "f32")
        c.type = ElementType::f32;
      else if (t == "f16")
        c.type = ElementType::f16;
      else if (t == "bf16")
        c.type = ElementType::bf16;
      else
        usageError("--dtype must be f32, f16 or bf16, got '" + t + "'");
    } else
      usageError("unknown or incomplete argument '" + a + "'");
  }
  if (c.repeat < 1 || c.warmup < 0)
    usageError("--repeat must be at least 1 and --warmup at least 0, got " +
               std::to_string(c.repeat) + " and " + std::to_string(c.warmup));
  if (c.cases.empty())
    usageError("give at least one --case");
  if (c.p <= 0 || c.seq % c.p != 0)
    usageError("--S (" + std::to_string(c.seq) +
               ") must be a multiple of --P (" + std::to_string(c.p) + ")");
  if (c.zigzag && c.seq % (2 * c.p) != 0)
    usageError("--layout zigzag needs --S (" + std::to_string(c.seq) +
               ") to be a multiple of 2 * --P");
  if (c.kvHeads <= 0 || c.heads % c.kvHeads != 0)
    usageError("--H must be a multiple of --Hkv");
  if (!c.emitMlir && c.lib.empty())
    usageError("give --emit-mlir or --lib");
  for (const Case &cs : c.cases) {
    if (cs.lse && c.zigzag)
      usageError("+lse is about cp.local_attention; --layout zigzag is not");
    if (cs.lse && c.p != 1)
      usageError("+lse needs --P 1: only cp.local_attention returns the "
                 "log-sum-exp");
    if (cs.grad && c.scheme.empty() && (c.p != 1 || c.zigzag))
      usageError("+grad without --scheme checks cp.local_attention_grad on "
                 "one block: it needs --P 1 and the contiguous layout");
    if (cs.train && c.scheme.empty())
      usageError("+train chains cp.attention into cp.attention_grad: it "
                 "needs --scheme");
    if (cs.grad && (cs.lse || cs.merge))
      usageError("+grad does not take +lse or +merge");
    if (cs.grad && !c.scheme.empty() && (cs.qOffset || cs.kvOffset))
      usageError("+at:QO:KO is about cp.local_attention; +grad with --scheme "
                 "checks cp.attention_grad");
    if (cs.grad && cs.hasModRegions() && (cs.qOffset || cs.kvOffset))
      usageError("+grad with mask or score regions needs offsets 0 (the "
                 "regions read positions of the global sequence)");
    if (cs.hasModRegions() && cs.lse)
      usageError("+lse checks cp.local_attention; mask and score regions are "
                 "checked on cp.attention");
    if (cs.stacked && (cs.lse || cs.grad || cs.merge))
      usageError("+stacked is two forward cp.attention layers: it does not "
                 "take +lse, +merge, +grad or +train");
    if (cs.stacked && c.headDim != c.valueDim)
      usageError("+stacked feeds each output to the next layer as queries: "
                 "it needs --D (" + std::to_string(c.headDim) +
                 ") equal to --Dv (" + std::to_string(c.valueDim) + ")");
    if (cs.sinks && (cs.merge || (cs.grad && c.scheme.empty())))
      usageError("+sinks is checked on cp.attention (and cp.attention_grad, "
                 "which returns the sinks' gradient): it needs --scheme with "
                 "+grad and does not take +merge");
    if ((cs.qOffset || cs.kvOffset || cs.merge) && !cs.lse && !cs.grad)
      usageError("+at:QO:KO and +merge need +lse (they are about "
                 "cp.local_attention)");
  }
  return c;
}

} // namespace cp::run
