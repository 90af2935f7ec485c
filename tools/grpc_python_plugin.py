"""A protoc plugin producing *_pb2_grpc.py, for `buf generate`.

grpcio-tools ships the grpc_python generator only inside its protoc, not as a
plugin program (grpc/grpc#15675). This plugin hands the request's files to that
protoc as a descriptor set and returns what it writes.
"""

import pathlib
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2
from google.protobuf.compiler import plugin_pb2


def main() -> None:
    request = plugin_pb2.CodeGeneratorRequest.FromString(sys.stdin.buffer.read())
    response = plugin_pb2.CodeGeneratorResponse(
        supported_features=plugin_pb2.CodeGeneratorResponse.FEATURE_PROTO3_OPTIONAL
    )
    with tempfile.TemporaryDirectory() as tmp:
        descriptors = pathlib.Path(tmp, "descriptors.binpb")
        descriptors.write_bytes(
            descriptor_pb2.FileDescriptorSet(file=request.proto_file).SerializeToString()
        )
        out = pathlib.Path(tmp, "out")
        out.mkdir()
        result = subprocess.run(
            [sys.executable, "-m", "grpc_tools.protoc", f"--descriptor_set_in={descriptors}",
             f"--grpc_python_out={out}", *request.file_to_generate],
            capture_output=True, text=True,
        )
        if result.returncode != 0:
            response.error = result.stderr
        else:
            for path in sorted(out.rglob("*.py")):
                response.file.add(name=str(path.relative_to(out)), content=path.read_text())
    sys.stdout.buffer.write(response.SerializeToString())


if __name__ == "__main__":
    main()
