"""Every RPC of every taskmem service is classified in core/access.RPC_RULES: its role and how a scoped key's
call names its task. The services are read from the contract's descriptors (the FileDescriptorSet `make gen`
builds from proto/), so a service or RPC added to the contract without its rows fails here."""

from __future__ import annotations

from importlib.resources import files

from google.protobuf import descriptor_pb2

from taskmem.core.access import RPC_RULES, Role, Target, rule_of

CONTRACT = files("taskmem.api").joinpath("contract_descriptors.binpb")


def _contract() -> dict[str, descriptor_pb2.ServiceDescriptorProto]:
    contract = descriptor_pb2.FileDescriptorSet.FromString(CONTRACT.read_bytes())
    return {service.name: service for file in contract.file if file.package == "taskmem.v1" for service in file.service}


def _messages() -> dict[str, descriptor_pb2.DescriptorProto]:
    contract = descriptor_pb2.FileDescriptorSet.FromString(CONTRACT.read_bytes())
    return {f".{file.package}.{message.name}": message for file in contract.file for message in file.message_type}


def _rpcs() -> set[str]:
    return {f"{name}/{method.name}" for name, service in _contract().items() for method in service.method}


def test_every_rpc_of_every_service_of_the_contract_has_a_rule() -> None:
    assert len(_contract()) >= 4
    missing = _rpcs() - set(RPC_RULES)
    assert not missing, f"add these RPCs to core/access.RPC_RULES: {sorted(missing)}"


def test_the_table_names_no_rpc_that_does_not_exist() -> None:
    assert not set(RPC_RULES) - _rpcs()


def test_every_rule_that_names_a_field_names_one_of_its_request() -> None:
    messages = _messages()
    inputs = {f"{name}/{method.name}": method.input_type for name, service in _contract().items()
              for method in service.method}
    for name, rule in RPC_RULES.items():
        if rule.target not in (Target.TASK, Target.ACTION, Target.WAIT):
            continue
        message = messages[inputs[name]]
        for part in rule.field.split("."):
            field = next((f for f in message.field if f.name == part), None)
            assert field is not None, f"{name}: {rule.field}"
            if field.type_name in messages:
                message = messages[field.type_name]


def test_reads_need_a_reader_writes_a_writer_and_webhook_secrets_an_admin() -> None:
    assert rule_of("/taskmem.v1.TaskService/GetTask").role is Role.READER  # type: ignore[union-attr]
    assert rule_of("/taskmem.v1.TaskService/CreateTask").role is Role.WRITER  # type: ignore[union-attr]
    assert rule_of("/taskmem.v1.TaskService/RotateWebhookSecret").role is Role.ADMIN  # type: ignore[union-attr]
    assert rule_of("/taskmem.v1.TaskService/NoSuchMethod") is None
