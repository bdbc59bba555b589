/**
 * exec's output: stdout and stderr read together, in arrival order, with
 * one cap for both (docs/contract.md §9); the child never blocks on a full
 * pipe.
 *
 * @module
 */

import { clip, type SecretRegistry } from "../../engine/secrets.ts";
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
  const kept: Uint8Array[] = [];
  let size = 0;
  const take = (chunk: Uint8Array) => {
    const room = OUTPUT_CAP - size;
    if (room <= 0) return;
    // Copy: a reader may reuse its buffer for the next chunk.
    const part = chunk.length > room ? chunk.slice(0, room) : chunk.slice();
    kept.push(part);
    size += part.length;
  };
  await Promise.all([drain(child.stdout, take), drain(child.stderr, take)]);
  return new TextDecoder().decode(concatBytes(kept, size));
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
