# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit", "gpu", "common", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "tests")

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.attn_tools_dir, append_path=True)
# Keep the kernel cache of tests away from the user's.
config.environment["ATTN_JIT_DISK_CACHE"] = "0"

tools = ["attn-opt", "attn-opt-fuzzer", "attn-run", "attn-compile-time", "FileCheck", "not", "count"]
llvm_config.add_tool_substitutions(tools, [config.attn_tools_dir, config.llvm_tools_dir])

# attn-opt-fuzzer linked with libFuzzer fuzzes the directories it is given
# instead of running their files once (tools/ci_sanitizers.sh fuzzes it).
if config.attn_libfuzzer:
    config.available_features.add("libfuzzer")

ptxas = os.path.join(config.cuda_root, "bin", "ptxas")
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
config.substitutions.append(
    ("%examples", os.path.join(os.path.dirname(config.test_source_root), "examples")))
