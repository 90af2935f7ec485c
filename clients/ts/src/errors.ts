// Reading the google.rpc.ErrorInfo that the taskmem server attaches to every
// error (AIP-193).
//
// There is no generated TypeScript for google/rpc/error_details.proto in this
// package, so ErrorInfo's descriptor is built here at run time from a
// FileDescriptorProto holding just that message. ConnectError.findDetails()
// then decodes the "grpc-status-details-bin" detail with it.

import { create, createFileRegistry, type DescMessage } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
} from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";

/** The `domain` of every ErrorInfo the taskmem server sends. */
export const ERROR_DOMAIN = "taskmem.dev";

/** google.rpc.ErrorInfo as a plain object. */
export interface ErrorInfo {
  /** An ErrorReason enum name, for example "ERROR_REASON_INVALID_FIELD". */
  reason: string;
  /** "taskmem.dev" for errors made by the taskmem server. */
  domain: string;
  /** For example {"field": "plan[2].depends_on"} for a bad field. */
  metadata: Record<string, string>;
}

const { OPTIONAL, REPEATED } = FieldDescriptorProto_Label;
const { STRING, MESSAGE } = FieldDescriptorProto_Type;

// google/rpc/error_details.proto, reduced to ErrorInfo:
//   message ErrorInfo { string reason = 1; string domain = 2; map<string, string> metadata = 3; }
const errorDetailsFile = create(FileDescriptorProtoSchema, {
  name: "google/rpc/error_details.proto",
  package: "google.rpc",
  syntax: "proto3",
  messageType: [
    {
      name: "ErrorInfo",
      field: [
        { name: "reason", number: 1, label: OPTIONAL, type: STRING, jsonName: "reason" },
        { name: "domain", number: 2, label: OPTIONAL, type: STRING, jsonName: "domain" },
        {
          name: "metadata",
          number: 3,
          label: REPEATED,
          type: MESSAGE,
          typeName: ".google.rpc.ErrorInfo.MetadataEntry",
          jsonName: "metadata",
        },
      ],
      nestedType: [
        {
          name: "MetadataEntry",
          field: [
            { name: "key", number: 1, label: OPTIONAL, type: STRING, jsonName: "key" },
            { name: "value", number: 2, label: OPTIONAL, type: STRING, jsonName: "value" },
          ],
          options: { mapEntry: true },
        },
      ],
    },
  ],
});

/** The descriptor of google.rpc.ErrorInfo, for ConnectError.findDetails(). */
export const ErrorInfoSchema: DescMessage = (() => {
  const desc = createFileRegistry(errorDetailsFile, () => undefined).getMessage("google.rpc.ErrorInfo");
  if (desc === undefined) {
    throw new Error("taskmem: could not build the google.rpc.ErrorInfo descriptor");
  }
  return desc;
})();

/**
 * Returns the google.rpc.ErrorInfo of a failed call: the one from the
 * taskmem.dev domain if there is one, else the first ErrorInfo. Returns
 * undefined when err is not a ConnectError or carries no ErrorInfo.
 */
export function errorInfo(err: unknown): ErrorInfo | undefined {
  if (!(err instanceof ConnectError)) {
    return undefined;
  }
  const infos = err.findDetails(ErrorInfoSchema) as unknown as ErrorInfo[];
  const info = infos.find((i) => i.domain === ERROR_DOMAIN) ?? infos[0];
  if (info === undefined) {
    return undefined;
  }
  return { reason: info.reason, domain: info.domain, metadata: { ...info.metadata } };
}

/**
 * The ErrorInfo reason of a failed call, an ErrorReason enum name such as
 * "ERROR_REASON_INVALID_FIELD"; undefined when there is none. Match on this,
 * never on the message text.
 */
export function errorReason(err: unknown): string | undefined {
  return errorInfo(err)?.reason;
}

/** The request field a failed call names (ErrorInfo metadata "field"), if any. */
export function errorField(err: unknown): string | undefined {
  return errorInfo(err)?.metadata["field"];
}
