"""cc_proto: C++ code for one .proto with Debian's /usr/bin/protoc.

The native proto_library/cc_proto_library would download
@com_google_protobuf, so codegen is a genrule. The .proto is compiled with
the workspace root as proto path, so `proto/event.proto` gives
`#include "proto/event.pb.h"`, exactly like the CMake build.

    cc_proto(name = "event_cc_proto", src = "event.proto")
    cc_proto(name = "service_cc_grpc", src = "service.proto", grpc = True,
             deps = [":event_cc_proto"])   # a .proto that imports event.proto
"""

def cc_proto(name, src, grpc = False, deps = [], proto_deps = [], visibility = None):
    """Generates <base>.pb.{h,cc} (and .grpc.pb.{h,cc}) and a cc_library.

    Args:
      name: the cc_library's name.
      src: the .proto file in this package.
      grpc: also run grpc_cpp_plugin and depend on @sys//:grpc.
      deps: cc_library targets of imported .protos.
      proto_deps: the imported .proto files (labels), so the genrule sees them.
      visibility: of the cc_library.
    """
    base = src[:-len(".proto")]
    outs = [base + ".pb.h", base + ".pb.cc"]
    cmd = ("/usr/bin/protoc --proto_path=. --proto_path=/usr/include " +
           "--cpp_out=$(GENDIR)")
    if grpc:
        outs += [base + ".grpc.pb.h", base + ".grpc.pb.cc"]
        cmd += (" --grpc_out=$(GENDIR)" +
                " --plugin=protoc-gen-grpc=/usr/bin/grpc_cpp_plugin")
    cmd += " $(location %s)" % src
    native.genrule(
        name = name + "_gen",
        srcs = [src] + proto_deps,
        outs = outs,
        cmd = cmd,
    )
    native.cc_library(
        name = name,
        srcs = [o for o in outs if o.endswith(".cc")],
        hdrs = [o for o in outs if o.endswith(".h")],
        deps = deps + (["@sys//:grpc"] if grpc else ["@sys//:protobuf"]),
        visibility = visibility if visibility != None else ["//visibility:public"],
    )
