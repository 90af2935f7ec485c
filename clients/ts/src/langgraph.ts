// @taskmem/client/langgraph: TaskmemSaver, a LangGraph.js checkpointer
// (@langchain/langgraph-checkpoint's BaseCheckpointSaver) on taskmem's
// CheckpointService.
//
//     import { TaskmemSaver } from "@taskmem/client/langgraph";
//     const graph = builder.compile({ checkpointer: new TaskmemSaver({ baseUrl: "http://127.0.0.1:50051" }) });
//
// Each LangGraph thread is a taskmem task (the task whose id is the thread id,
// `configurable.taskmem_task_id` or the saver's taskId, else a new one): every
// checkpoint and batch of writes is an event of that task, a step of its web
// page, kept under the namespace's retention. Values go through the saver's
// serde (dumpsTyped) and are stored as the (type, bytes) it returns, byte for
// byte; metadata is stored as the JSON object the serde writes.
//
// Channel values read back as LangGraph's PostgreSQL saver returns them: a
// channel's value is there when this checkpoint's put announced it in
// newVersions, or when it is carried over unchanged (same version) from a
// parent that had it. Each checkpoint stores those values whole, so it stands
// alone when retention or a prune removes its ancestors.

import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  getCheckpointId,
  maxChannelVersion,
  TASKS,
  WRITES_IDX_MAP,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";

import { createTaskmemClient, type TaskmemClient, type TaskmemClientOptions } from "./client.js";
import type { Checkpoint as StoredCheckpoint, SerializedValue } from "./gen/taskmem/v1/checkpoint_pb.js";
import type { ListCheckpointsRequestSchema } from "./gen/taskmem/v1/checkpoint_service_pb.js";

/** ListCheckpoints' largest page. */
export const PAGE_MAX = 100;
/** PutCheckpointWrites' largest batch. */
const WRITES_PER_CALL = 1_000;
/** How many checkpoints' channel lists a saver remembers (for the next put's parent). */
const REMEMBERED_MAX = 1_000;

/** A stored checkpoint's channels and their versions. */
type ChannelsSeen = Map<string, ChannelVersions[string] | undefined>;

export interface TaskmemSaverOptions extends TaskmemClientOptions {
  /** A client to use (the caller closes it); otherwise the saver makes one from the other options. */
  client?: TaskmemClient;
  /** Attach every new thread to this task instead of one task per thread. */
  taskId?: string;
  /** The serialiser; default LangGraph's JsonPlusSerializer. */
  serde?: SerializerProtocol;
}

export class TaskmemSaver extends BaseCheckpointSaver {
  readonly client: TaskmemClient;
  readonly taskId: string;
  private readonly ownsClient: boolean;
  private readonly seen = new Map<string, ChannelsSeen>();

  constructor(options: TaskmemSaverOptions = {}) {
    super(options.serde);
    const { client, taskId, serde: _serde, ...clientOptions } = options;
    this.client = client ?? createTaskmemClient(clientOptions);
    this.ownsClient = client === undefined;
    this.taskId = taskId ?? "";
  }

  /** Closes the client the saver made (a given client is the caller's). */
  close(): void {
    if (this.ownsClient) this.client.close();
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.["thread_id"];
    if (threadId === undefined || threadId === null || threadId === "") return undefined;
    try {
      const { checkpoint } = await this.client.checkpoints.getCheckpoint({
        threadId: String(threadId),
        checkpointNs: namespaceOf(config),
        checkpointId: getCheckpointId(config) ?? "",
      });
      return checkpoint === undefined ? undefined : await this.toTuple(checkpoint);
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.NotFound) return undefined;
      throw err;
    }
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { filter, before } = options;
    let remaining = options.limit;
    const checkpointId = getCheckpointId(config);
    const beforeId = before === undefined ? "" : (getCheckpointId(before) ?? "");
    if (checkpointId) {
      const found = await this.getTuple(config);
      if (found !== undefined && matches(found.metadata, filter) && (!beforeId || checkpointId < beforeId) && remaining !== 0) {
        yield found;
      }
      return;
    }
    const configurable = config.configurable ?? {};
    const request: MessageInitShape<typeof ListCheckpointsRequestSchema> = {
      threadId: configurable["thread_id"] === undefined ? "" : String(configurable["thread_id"]),
      beforeCheckpointId: beforeId,
    };
    if (configurable["checkpoint_ns"] !== undefined) request.checkpointNs = String(configurable["checkpoint_ns"]);
    if (filter !== undefined && Object.keys(filter).length > 0) {
      request.metadataFilter = JSON.parse(JSON.stringify(filter)) as JsonObject;
    }
    while (remaining === undefined || remaining > 0) {
      request.pageSize = remaining === undefined ? PAGE_MAX : Math.min(remaining, PAGE_MAX);
      const page = await this.client.checkpoints.listCheckpoints(request);
      for (const stored of page.checkpoints) yield await this.toTuple(stored);
      if (remaining !== undefined) remaining -= page.checkpoints.length;
      if (page.nextPageToken === "") return;
      request.pageToken = page.nextPageToken;
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = requireId(config, "thread_id", "put a checkpoint");
    const checkpointNs = namespaceOf(config);
    const parentId = getCheckpointId(config) ?? "";
    // A parent named but gone (pruned, expired) cannot say what it held: keep every value.
    const parent = parentId === "" ? new Map() : await this.channelsOf(threadId, checkpointNs, parentId);
    const stored: Checkpoint = { ...checkpoint, channel_values: {} };
    for (const [channel, value] of Object.entries(checkpoint.channel_values)) {
      const announced = channel in newVersions;
      const carried = parent === undefined || (parent.has(channel) && parent.get(channel) === checkpoint.channel_versions[channel]);
      if (announced || carried) stored.channel_values[channel] = value;
    }
    const requested = config.configurable?.["taskmem_task_id"];
    await this.client.checkpoints.putCheckpoint({
      checkpoint: {
        threadId,
        checkpointNs,
        checkpointId: checkpoint.id,
        parentCheckpointId: parentId,
        value: await this.dump(stored),
        metadataJson: await this.metadataJson(metadata),
      },
      taskId: typeof requested === "string" && requested !== "" ? requested : this.taskId,
    });
    this.remember(threadId, checkpointNs, stored);
    return { configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const threadId = requireId(config, "thread_id", "put writes");
    const checkpointId = requireId(config, "checkpoint_id", "put writes");
    if (writes.length === 0) return;
    const stored = await Promise.all(
      writes.map(async ([channel, value], position) => ({
        graphTaskId: taskId,
        idx: WRITES_IDX_MAP[channel] ?? position,
        channel,
        value: await this.dump(value),
        graphTaskPath: taskPath ?? "",
      })),
    );
    for (let start = 0; start < stored.length; start += WRITES_PER_CALL) {
      await this.client.checkpoints.putCheckpointWrites({
        threadId,
        checkpointNs: namespaceOf(config),
        checkpointId,
        writes: stored.slice(start, start + WRITES_PER_CALL),
      });
    }
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.client.checkpoints.deleteCheckpointThread({ threadId: String(threadId) });
    const prefix = JSON.stringify([String(threadId)]).slice(0, -1) + ",";
    for (const key of [...this.seen.keys()]) if (key.startsWith(prefix)) this.seen.delete(key);
  }

  /**
   * Copies a thread's checkpoints and writes to another thread; a new target
   * thread's task is a fork of the source's task (ForkTask). Returns the
   * target thread's task id.
   */
  async copyThread(sourceThreadId: string, targetThreadId: string): Promise<string> {
    const { task } = await this.client.checkpoints.copyCheckpointThread({
      sourceThreadId: String(sourceThreadId),
      targetThreadId: String(targetThreadId),
    });
    return task?.id ?? "";
  }

  /** The taskmem task the thread belongs to (its record, events and web page); undefined before its first checkpoint. */
  async taskOf(threadId: string): Promise<string | undefined> {
    const { checkpoints } = await this.client.checkpoints.listCheckpoints({
      threadId: String(threadId),
      pageSize: 1,
      omitValues: true,
    });
    return checkpoints[0]?.taskId;
  }

  private async dump(value: unknown): Promise<{ type: string; data: Uint8Array }> {
    const [type, data] = await this.serde.dumpsTyped(value);
    return { type, data };
  }

  private async load(value: SerializedValue | undefined): Promise<unknown> {
    return await this.serde.loadsTyped(value?.type ?? "json", value?.data ?? new Uint8Array());
  }

  /** The metadata as the serde's JSON (so its typed values load back), else plain JSON. */
  private async metadataJson(metadata: CheckpointMetadata): Promise<string> {
    const [type, data] = await this.serde.dumpsTyped(metadata);
    return type === "json" ? new TextDecoder().decode(data) : JSON.stringify(metadata);
  }

  private async toTuple(stored: StoredCheckpoint): Promise<CheckpointTuple> {
    const configured = (checkpointId: string): RunnableConfig => ({
      configurable: { thread_id: stored.threadId, checkpoint_ns: stored.checkpointNs, checkpoint_id: checkpointId },
    });
    const checkpoint = (await this.load(stored.value)) as Checkpoint;
    this.remember(stored.threadId, stored.checkpointNs, checkpoint);
    if (checkpoint.v < 4 && stored.parentCheckpointId !== "") {
      await this.migratePendingSends(stored, checkpoint);
    }
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      stored.pendingWrites.map(
        async (write): Promise<CheckpointPendingWrite> => [write.graphTaskId, write.channel, await this.load(write.value)],
      ),
    );
    const tuple: CheckpointTuple = {
      config: configured(stored.checkpointId),
      checkpoint,
      metadata: (stored.metadataJson === ""
        ? {}
        : await this.serde.loadsTyped("json", stored.metadataJson)) as CheckpointMetadata,
      pendingWrites,
    };
    if (stored.parentCheckpointId !== "") tuple.parentConfig = configured(stored.parentCheckpointId);
    return tuple;
  }

  /**
   * The stored channels of a checkpoint with their versions (a put's parent):
   * remembered from this saver's last puts and reads, else read from the server.
   * Undefined when the checkpoint is gone.
   */
  private async channelsOf(threadId: string, checkpointNs: string, checkpointId: string): Promise<ChannelsSeen | undefined> {
    const key = JSON.stringify([threadId, checkpointNs, checkpointId]);
    const known = this.seen.get(key);
    if (known !== undefined) return known;
    try {
      const { checkpoint } = await this.client.checkpoints.getCheckpoint({ threadId, checkpointNs, checkpointId });
      if (checkpoint === undefined) return undefined;
      return this.remember(threadId, checkpointNs, (await this.load(checkpoint.value)) as Checkpoint);
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.NotFound) return undefined;
      throw err;
    }
  }

  private remember(threadId: string, checkpointNs: string, stored: Checkpoint): ChannelsSeen {
    const channels: ChannelsSeen = new Map();
    for (const channel of Object.keys(stored.channel_values)) channels.set(channel, stored.channel_versions[channel]);
    if (this.seen.size >= REMEMBERED_MAX) this.seen.delete(this.seen.keys().next().value!);
    this.seen.set(JSON.stringify([threadId, checkpointNs, stored.id]), channels);
    return channels;
  }

  /** Checkpoints before format 4 kept pending sends as the parent's TASKS writes, as MemorySaver migrates them. */
  private async migratePendingSends(stored: StoredCheckpoint, checkpoint: Checkpoint): Promise<void> {
    let parentWrites: StoredCheckpoint["pendingWrites"] = [];
    try {
      const { checkpoint: parent } = await this.client.checkpoints.getCheckpoint({
        threadId: stored.threadId,
        checkpointNs: stored.checkpointNs,
        checkpointId: stored.parentCheckpointId,
      });
      parentWrites = parent?.pendingWrites ?? [];
    } catch (err) {
      if (!(err instanceof ConnectError && err.code === Code.NotFound)) throw err;
    }
    const sends = await Promise.all(parentWrites.filter((w) => w.channel === TASKS).map((w) => this.load(w.value)));
    checkpoint.channel_values[TASKS] = sends;
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }
}

function namespaceOf(config: RunnableConfig): string {
  const ns = config.configurable?.["checkpoint_ns"];
  return ns === undefined || ns === null ? "" : String(ns);
}

function requireId(config: RunnableConfig, key: "thread_id" | "checkpoint_id", doing: string): string {
  const value = config.configurable?.[key];
  if (value === undefined || value === null || value === "") {
    throw new Error(`TaskmemSaver: cannot ${doing}: the config's "configurable" has no "${key}"`);
  }
  return String(value);
}

function matches(metadata: CheckpointMetadata | undefined, wanted: Record<string, unknown> | undefined): boolean {
  if (wanted === undefined) return true;
  const have = (metadata ?? {}) as Record<string, unknown>;
  return Object.entries(wanted).every(([key, value]) => key in have && JSON.stringify(have[key]) === JSON.stringify(value));
}
