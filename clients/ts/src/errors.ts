// Reading the google.rpc.ErrorInfo that the taskmem server attaches to every
// error (AIP-193), with the descriptor generated from
// google/rpc/error_details.proto (buf.gen.googleapis.yaml).

import { ConnectError } from "@connectrpc/connect";

import { type ErrorInfo, ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";
import { ErrorReason, ErrorReasonSchema } from "./gen/taskmem/v1/error_reason_pb.js";

export { type ErrorInfo, ErrorInfoSchema };

/** The `domain` of every ErrorInfo the taskmem server sends. */
export const ERROR_DOMAIN = "taskmem.dev";

/**
 * Returns the google.rpc.ErrorInfo of a failed call: the one from the
 * taskmem.dev domain if there is one, else the first ErrorInfo. Returns
 * undefined when err is not a ConnectError or carries no ErrorInfo.
 */
export function errorInfo(err: unknown): ErrorInfo | undefined {
  if (!(err instanceof ConnectError)) {
    return undefined;
  }
  const infos = err.findDetails(ErrorInfoSchema);
  return infos.find((i) => i.domain === ERROR_DOMAIN) ?? infos[0];
}

/**
 * The ErrorReason the server gave for a failed call, for example
 * ErrorReason.INVALID_FIELD. Match on this, never on the message text. It is
 * ErrorReason.UNSPECIFIED when err carries no ErrorInfo or a reason this
 * client does not know (errorInfo(err)?.reason has the raw name).
 */
export function errorReason(err: unknown): ErrorReason {
  const name = errorInfo(err)?.reason;
  return ErrorReasonSchema.values.find((value) => value.name === name)?.number ?? ErrorReason.UNSPECIFIED;
}

/** The request field a failed call names (ErrorInfo metadata "field"), if any. */
export function errorField(err: unknown): string | undefined {
  return errorInfo(err)?.metadata["field"];
}
