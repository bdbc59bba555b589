/**
 * exec's output: stdout and stderr read together, in arrival order, with
 * one cap for both (docs/contract.md §9); the child never blocks on a full
 * pipe.
 *
 * @module
 */

import { clip, type SecretRegistry } from "../../engine/masking.ts";
import { concatBytes } from "../_common/stream.ts";

/** Most captured output (stdout and stderr together) kept per attempt. */
export const OUTPUT_CAP = 1 << 20;

/**
 * The command's output as text: stdout and stderr in arrival order, at most
 * `OUTPUT_CAP` bytes kept, the rest read and dropped. Each stream is read by a
 * loop of its own, one read at a time: a race of the two reads would leave a
 * reaction on the quiet stream's pending read per chunk of the busy one
 * (`exec -- yes` grew by gigabytes; docs/reliability.md).
 */
export async function readOutput(child: Deno.ChildProcess): Promise<string> {
  return (await readOutputs(child, false)).text;
}

/** What a command wrote: both streams together, and stdout alone when asked for. */
export interface Outputs {
  /** stdout and stderr in arrival order, at most `OUTPUT_CAP` bytes. */
  readonly text: string;
  /** stdout alone, at most `OUTPUT_CAP` bytes (with `keepStdout`). */
  readonly stdout?: { readonly text: string; readonly truncated: boolean };
}

/**
 * Like `readOutput`; with `keepStdout`, stdout alone is kept besides, under its own cap of
 * `OUTPUT_CAP` bytes (for `--jsonpath`, which parses it).
 */
export async function readOutputs(child: Deno.ChildProcess, keepStdout: boolean): Promise<Outputs> {
  const both = capped();
  const out = capped();
  await Promise.all([
    drain(child.stdout, (c) => {
      both.take(c);
      if (keepStdout) out.take(c);
    }),
    drain(child.stderr, both.take),
  ]);
  const text = new TextDecoder().decode(both.bytes());
  if (!keepStdout) return { text };
  return { text, stdout: { text: new TextDecoder().decode(out.bytes()), truncated: out.over } };
}

/** Chunks kept up to `OUTPUT_CAP` bytes, the rest dropped (`over` says some was). */
function capped() {
  const kept: Uint8Array[] = [];
  let size = 0;
  const state = {
    over: false,
    take(chunk: Uint8Array) {
      const room = OUTPUT_CAP - size;
      if (chunk.length > room) state.over = true;
      if (room <= 0) return;
      // Copy: a reader may reuse its buffer for the next chunk.
      const part = chunk.length > room ? chunk.slice(0, room) : chunk.slice();
      kept.push(part);
      size += part.length;
    },
    bytes: () => concatBytes(kept, size),
  };
  return state;
}

/** Reads `stream` to its end, giving each chunk to `take`. */
async function drain(
  stream: ReadableStream<Uint8Array>,
  take: (chunk: Uint8Array) => void,
): Promise<void> {
  for await (const chunk of stream) take(chunk);
}

/**
 * The last non-empty line of `text`, redacted and cut to 200 characters (in that order:
 * docs/contract.md §9).
 */
export function lastLine(text: string, secrets?: SecretRegistry): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  return clip(lines.at(-1) ?? "", 200, secrets);
}
