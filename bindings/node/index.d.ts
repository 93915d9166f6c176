/// <reference types="node" />
// Types of the agent-loopguard package (loopguard for Node.js, a napi-rs addon).

/** What the host should do, weakest first. */
export declare const Action: {
  readonly CONTINUE: 'continue';
  readonly STEER: 'steer';
  readonly COMPACT: 'compact';
  readonly BLOCK: 'block';
  readonly ABORT: 'abort';
};
export type ActionName = (typeof Action)[keyof typeof Action];

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Origin = 'unknown' | 'human' | 'harness' | 'guard';
export type StreamName = 'text' | 'thinking';

/** One event, shaped like a sidecar input line (a `session` key is accepted and ignored). */
export type Event = { session?: string } & (
  | { type: 'user'; text: string; origin?: Origin }
  | { type: 'run_start' | 'agent_start'; run_id?: string | null }
  | { type: 'run_end' | 'agent_end' }
  | { type: 'message_start' }
  | { type: 'message_end' }
  | { type: 'text_delta'; stream: StreamName; delta: string }
  | { type: 'assistant'; text?: string | null; thinking?: string | null }
  | {
      type: 'tool_call';
      /** An integer is read as its digits; absent or empty for a host that numbers no calls: a result without one answers the oldest call waiting. */
      id?: string | number;
      /** Required unless `function` names it. */
      tool?: string;
      args?: Json;
      /** OpenAI's tool call object as it is: its `name` and `arguments` are read as `tool` and `args`. */
      function?: { name?: string; arguments?: Json };
      batch?: number | null;
    }
  | {
      type: 'tool_result';
      id?: string | number;
      /** Absent or empty: the call's tool (the result is paired with its call by `id`). */
      tool?: string;
      /** The text the tool returned (absent: nothing), one object (a content block with a `type` or a `text`; otherwise a structured result such as `{ stdout, stderr, exit_code }`: what it printed, then its other non-empty, non-zero fields as `key: value` lines), or MCP's content blocks (`[{ type: 'text', text }, { type: 'image', … }]`): their texts joined by newlines, image blocks counted into `images` when it is not given. */
      content?: string | { [key: string]: Json } | Array<string | { [key: string]: Json }>;
      /** The Responses API's name for `content`, read when `content` is absent. */
      output?: string | { [key: string]: Json } | Array<string | { [key: string]: Json }>;
      is_error?: boolean;
      images?: number;
      details?: Json;
    }
  | { type: 'compaction' }
  | { type: 'session_start'; id: string }
);

/** One finding behind a verdict. */
export interface Finding {
  detector: string;
  /** `fatal` ends the request at once (the loop survived a compaction, the turn stalled). */
  level: 'warning' | 'critical' | 'fatal';
  count: number;
  key: string;
  message: string;
  /** Sequence numbers of the events that form the loop, oldest first. */
  evidence: number[];
  /** A stable abort code, when the detector gives one. */
  code?: string;
  /** For text findings: the character offset where the detector fired. */
  offset?: number;
  /** For text findings: a sample of the repeated text. */
  sample?: string;
  /** The tool involved, when there is one. */
  tool?: string;
}

/** The guard's answer to one event (a plain object; absent fields are left out). */
export interface Verdict {
  action: ActionName;
  /** Steer text, block reason (the error the model sees) or abort message; absent on a pass. */
  message?: string;
  /** `tool_loop:<detector>` for a block, `loop_aborted:<detector>` for an abort. */
  code?: string;
  /** For a block: also end the agent loop. */
  terminate: boolean;
  /** For a block: refuse every call of the current batch. */
  wholeBatch: boolean;
  /** For a steer or a compaction: when to deliver it. */
  deliver: 'now' | 'at_settle';
  findings: Finding[];
}

/** Where `Guard.restore` takes the configuration from (at most one; preset `default`). */
export interface RestoreOptions {
  preset?: string;
  config?: string;
  configFile?: string;
}

/**
 * The errors thrown carry the Rust error's message and a `code`: `LOOPGUARD_CONFIG`,
 * `LOOPGUARD_EVENT` or `LOOPGUARD_STATE`.
 */
export interface LoopguardError extends Error {
  code: 'LOOPGUARD_CONFIG' | 'LOOPGUARD_EVENT' | 'LOOPGUARD_STATE' | 'LOOPGUARD_ERROR';
}

/** A loop guard for one agent session. */
export declare class Guard {
  /** A guard for preset `preset` (`default`, `pi-loop-guard`, `pi-repetition-guard`, `openclaw`). */
  constructor(preset?: string);
  /** A guard for a TOML configuration (resolved over the preset it names). */
  static fromConfig(toml: string): Guard;
  /** A guard for a TOML configuration file. */
  static fromConfigFile(path: string): Guard;
  /** A guard carrying `state` (from `snapshot()`), built from the same configuration. */
  static restore(state: Uint8Array, options?: RestoreOptions): Guard;
  /**
   * Observes one event given as an object shaped like a sidecar line. The object crosses
   * into Rust as `JSON.stringify(event)`.
   */
  observe(event: Event): Verdict;
  /** Observes one event given as JSON text (a sidecar line as it is). */
  observeJson(line: string): Verdict;
  /** The model asks to run `tool` with `args`: call it before the tool runs. */
  toolCall(id: string, tool: string, args?: Json, batch?: number): Verdict;
  /** A tool's result: call it after the tool ran. */
  toolResult(
    id: string,
    tool: string,
    content?: string,
    isError?: boolean,
    images?: number,
    details?: Json,
  ): Verdict;
  user(text: string, origin?: Origin): Verdict;
  /** A piece of streamed assistant output. */
  textDelta(delta: string, stream?: StreamName): Verdict;
  messageStart(): Verdict;
  messageEnd(): Verdict;
  /** A whole assistant message at once: the strongest verdict of its events. */
  assistant(text?: string | null, thinking?: string | null): Verdict;
  runStart(runId?: string | null): Verdict;
  runEnd(): Verdict;
  compaction(): Verdict;
  sessionStart(id: string): Verdict;
  /** The whole state (JSON text; the sidecar's `snapshot` state). */
  snapshot(): Buffer;
  /** The names of the detectors this guard runs. */
  detectors(): string[];
  /** Whether the guard is on (off: every event continues). */
  enabled: boolean;
  /** Number of events observed so far. */
  readonly seq: number;
  /** Runs a person's `/runaway on|off|toggle` command: the new state, or null. */
  command(line: string): boolean | null;
}

/** The preset names. */
export declare function presets(): string[];
