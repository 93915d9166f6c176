// Where the guard sits in a tool-calling agent loop.
//
// A minimal agent runtime around a scripted fake model (so it runs offline): the model streams
// text, then asks for tool calls; the runtime runs them and feeds the results back. The guard
// is asked three times per step:
//
// 1. on every streamed text chunk (`textDelta`): a message that repeats itself is cut off;
// 2. before a tool runs (`toolCall`): a BLOCK means the tool does not run and the model gets
//    the guard's message as the tool's error; an ABORT ends the request;
// 3. after the tool's result (`toolResult`): a STEER is injected as a message before the next
//    model call.
//
// TypeScript, type-checked and compiled by `tsc -p .` (Node 20 cannot run .ts itself):
// `npx tsc -p . && node build/examples/agent-loop.mjs`.

import { Action, Guard, type Json, type Verdict } from 'agent-loopguard';

export interface ToolCall {
  id: string;
  name: string;
  args: { [key: string]: Json };
}

/** What a model streams: text chunks, then tool calls. */
export type Piece = string | ToolCall;

export interface Message {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  isError?: boolean;
}

/** Replays a script: one list of pieces per turn; a turn without tool calls ends the run. */
export class FakeModel {
  calls = 0;
  constructor(private readonly turns: (turn: number, messages: Message[]) => Piece[]) {}
  *stream(messages: Message[]): Generator<Piece> {
    yield* this.turns(this.calls++, messages);
  }
}

export interface Outcome {
  stopped: 'done' | 'aborted' | 'turn_limit';
  turns: number;
  steers: string[];
  blocked: string[];
  toolsRun: number;
  cutText: number;
  abortCode: string | null;
  messages: Message[];
}

export type Tools = Record<string, (args: { [key: string]: Json }) => string>;

export function runAgent(
  model: FakeModel,
  tools: Tools,
  guard: Guard,
  prompt: string,
  maxTurns = 40,
): Outcome {
  const out: Outcome = {
    stopped: 'turn_limit',
    turns: 0,
    steers: [],
    blocked: [],
    toolsRun: 0,
    cutText: 0,
    abortCode: null,
    messages: [],
  };
  const pending: string[] = [];
  // Queues a steer; true when the verdict ends the request.
  const note = (v: Verdict): boolean => {
    if ((v.action === Action.STEER || v.action === Action.COMPACT) && v.message) {
      pending.push(v.message);
    }
    if (v.action === Action.ABORT) {
      out.stopped = 'aborted';
      out.abortCode = v.code ?? null;
      return true;
    }
    return false;
  };

  guard.runStart();
  guard.user(prompt, 'human');
  out.messages.push({ role: 'user', content: prompt });
  for (let turn = 0; turn < maxTurns; turn++) {
    out.turns = turn + 1;
    guard.messageStart();
    const text: string[] = [];
    const calls: ToolCall[] = [];
    for (const piece of model.stream(out.messages)) {
      if (typeof piece !== 'string') {
        calls.push(piece);
        continue;
      }
      const v = guard.textDelta(piece); // (1) on streamed text
      if (v.action !== Action.CONTINUE) {
        // The message loops: stop streaming it (a real host cancels the request).
        out.cutText++;
        if (note(v)) return out;
        break;
      }
      text.push(piece);
    }
    if (note(guard.messageEnd())) return out;
    out.messages.push({ role: 'assistant', content: text.join('') });
    if (calls.length === 0 && pending.length === 0) {
      out.stopped = 'done';
      guard.runEnd();
      return out;
    }
    for (const call of calls) {
      const v = guard.toolCall(call.id, call.name, call.args); // (2) before the tool runs
      let result: string;
      let isError = false;
      if (v.action === Action.ABORT) {
        note(v);
        return out;
      } else if (v.action === Action.BLOCK) {
        // The tool does not run; the model reads the guard's reason as its error.
        out.blocked.push(v.code ?? '');
        result = v.message ?? 'blocked';
        isError = true;
        guard.toolResult(call.id, call.name, result, true);
      } else {
        note(v);
        const tool = tools[call.name];
        result = tool ? tool(call.args) : `no tool ${call.name}`;
        out.toolsRun++;
        if (note(guard.toolResult(call.id, call.name, result))) return out; // (3) after its result
      }
      out.messages.push({ role: 'tool', content: result, isError });
    }
    for (const steer of pending) {
      out.steers.push(steer);
      out.messages.push({ role: 'user', content: steer });
      guard.user(steer, 'guard');
    }
    pending.length = 0;
  }
  return out;
}

const FILES: Record<string, string> = {
  'src/main.ts': "console.log('hello');\n",
  'src/util.ts': 'export const add = (a: number, b: number) => a + b;\n',
};

export const TOOLS: Tools = {
  read: (args) => FILES[String(args.path)] ?? 'no such file',
  list: () => JSON.stringify(Object.keys(FILES).sort()),
};

/** Reads the same file every turn, whatever it is told. */
export const stubbornModel = (): FakeModel =>
  new FakeModel((turn) => [
    'Let me look at the file. ',
    { id: `call-${turn}`, name: 'read', args: { path: 'src/main.ts' } },
  ]);

/** Lists, reads two files, answers. */
export const healthyModel = (): FakeModel => {
  const script: Piece[][] = [
    ["I'll list the files.", { id: 'c1', name: 'list', args: {} }],
    ['Reading main.', { id: 'c2', name: 'read', args: { path: 'src/main.ts' } }],
    ['Reading util.', { id: 'c3', name: 'read', args: { path: 'src/util.ts' } }],
    ['main logs hello; util adds two numbers.'],
  ];
  return new FakeModel((turn) => script[Math.min(turn, script.length - 1)] ?? []);
};

/** Streams the same sentence over and over in one message. */
export const babblingModel = (): FakeModel =>
  new FakeModel(() => Array<string>(200).fill('I will now check the configuration file. '));

export function main(log: (line: string) => void = console.log): void {
  const scenarios: [string, FakeModel][] = [
    ['healthy', healthyModel()],
    ['stubborn', stubbornModel()],
    ['babbling', babblingModel()],
  ];
  for (const [name, model] of scenarios) {
    const out = runAgent(model, TOOLS, new Guard('default'), 'What do the files in src/ do?');
    log(
      `${name.padEnd(9)} stopped=${out.stopped} turns=${out.turns} toolsRun=${out.toolsRun} ` +
        `steers=${out.steers.length} blocked=${JSON.stringify(out.blocked)} cutText=${out.cutText} ` +
        `abortCode=${out.abortCode}`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main();
