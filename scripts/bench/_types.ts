/**
 * The shape every benchmark module shares. `scripts/bench.ts` discovers
 * `scripts/bench/*_bench.ts`, runs each module's entries and prints one table.
 *
 * @module
 */

/** One row of the bench table. */
export interface BenchRow {
  /** What was measured: `time to verdict, tcp (already open)`. */
  readonly name: string;
  /** The measured figure with its unit: `12.3 ms (median of 20)`. */
  readonly figure: string;
  /** The target as text: `<= 1.3x floor`, or "" when there is none. */
  readonly target: string;
  /** A reference measured in the same run: `floor 10.1 ms; wait-on 410 ms`. */
  readonly reference?: string;
  /** Whether the target was met; undefined when there is no target. */
  readonly ok?: boolean;
}

/** A group of measurements. */
export interface BenchEntry {
  readonly name: string;
  /** Runs the measurements; throws only when the entry cannot run at all. */
  run(): Promise<BenchRow[]>;
}
