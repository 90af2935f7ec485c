"""Server reflection, v1 and v1alpha, serving the contract's descriptors with their documentation.

grpcio-reflection rebuilds each file from the runtime descriptor pool, which keeps no comments, and it
speaks v1alpha only. This servicer answers from the FileDescriptorSet that `make gen` builds with
source info (contract_descriptors.binpb), so `grpcurl describe` prints every RPC's comment in the
order the contract declares them; files outside the contract (health, reflection) come from the pool.
The two protocol versions share their messages byte for byte, so one implementation serves both.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from importlib import resources

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection_pb2 as rpb

SERVICE_NAMES = ("grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection")
# Listed: the one whose descriptor the runtime pool has (v1's is not shipped), so `describe` of every
# listed service works; v1 is served all the same for clients that speak only v1.
LISTED_NAME = "grpc.reflection.v1alpha.ServerReflection"
DESCRIPTORS_RESOURCE = "contract_descriptors.binpb"


def _symbols(file: descriptor_pb2.FileDescriptorProto) -> Iterable[str]:
    """Every fully-qualified name a file defines: messages (nested too), enums, services and methods."""
    prefix = f"{file.package}." if file.package else ""

    def messages(scope: str, found: Iterable[descriptor_pb2.DescriptorProto]) -> Iterable[str]:
        for message in found:
            name = f"{scope}{message.name}"
            yield name
            yield from (f"{name}.{enum.name}" for enum in message.enum_type)
            yield from messages(f"{name}.", message.nested_type)

    yield from messages(prefix, file.message_type)
    yield from (f"{prefix}{enum.name}" for enum in file.enum_type)
    for service in file.service:
        yield f"{prefix}{service.name}"
        yield from (f"{prefix}{service.name}.{method.name}" for method in service.method)


class DocumentedReflection:
    """Answers ServerReflectionInfo from the documented descriptors first, then the runtime pool."""

    def __init__(self, service_names: Iterable[str], descriptor_set: bytes,
                 pool: descriptor_pool.DescriptorPool | None = None) -> None:
        self._service_names = list(service_names)
        self._pool = pool or descriptor_pool.Default()
        files = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set).file
        self._files = {file.name: file for file in files}
        self._file_of_symbol = {symbol: file.name for file in files for symbol in _symbols(file)}

    def _proto(self, name: str) -> descriptor_pb2.FileDescriptorProto:
        if name in self._files:
            return self._files[name]
        proto = descriptor_pb2.FileDescriptorProto()
        self._pool.FindFileByName(name).CopyToProto(proto)
        return proto

    def _with_dependencies(self, name: str) -> list[bytes]:
        """The file first, then everything it imports (each once): what a reflection client needs."""
        seen: dict[str, bytes] = {}
        pending = [name]
        while pending:
            current = pending.pop()
            if current in seen:
                continue
            proto = self._proto(current)
            seen[current] = proto.SerializeToString()
            pending.extend(proto.dependency)
        return list(seen.values())

    def _file_of(self, symbol: str) -> str:
        if symbol in self._file_of_symbol:
            return self._file_of_symbol[symbol]
        return self._pool.FindFileContainingSymbol(symbol).name

    def answer(self, request: rpb.ServerReflectionRequest) -> rpb.ServerReflectionResponse:
        response = rpb.ServerReflectionResponse(valid_host=request.host, original_request=request)
        kind = request.WhichOneof("message_request")
        try:
            if kind == "list_services":
                response.list_services_response.service.extend(
                    rpb.ServiceResponse(name=name) for name in self._service_names)
            elif kind == "file_by_filename":
                response.file_descriptor_response.file_descriptor_proto.extend(
                    self._with_dependencies(request.file_by_filename))
            elif kind == "file_containing_symbol":
                response.file_descriptor_response.file_descriptor_proto.extend(
                    self._with_dependencies(self._file_of(request.file_containing_symbol)))
            else:  # the contract defines no extensions
                raise KeyError(kind)
        except KeyError:
            response.ClearField("list_services_response")
            response.ClearField("file_descriptor_response")
            response.error_response.error_code = grpc.StatusCode.NOT_FOUND.value[0]
            response.error_response.error_message = "not found"
        return response

    async def server_reflection_info(self, requests: AsyncIterator[rpb.ServerReflectionRequest],
                                     context: grpc.aio.ServicerContext) -> AsyncIterator[rpb.ServerReflectionResponse]:
        async for request in requests:
            yield self.answer(request)


def add_reflection(server: grpc.aio.Server, service_names: Iterable[str]) -> None:
    """Serve reflection v1 and v1alpha on `server`, listing `service_names` and the reflection service."""
    descriptor_set = resources.files("taskmem.api").joinpath(DESCRIPTORS_RESOURCE).read_bytes()
    servicer = DocumentedReflection([*service_names, LISTED_NAME], descriptor_set)
    method = grpc.stream_stream_rpc_method_handler(
        servicer.server_reflection_info, request_deserializer=rpb.ServerReflectionRequest.FromString,
        response_serializer=rpb.ServerReflectionResponse.SerializeToString)
    server.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler(name, {"ServerReflectionInfo": method}) for name in SERVICE_NAMES])
