import { assertEquals } from "../tests/_assert.ts";
import { formatDuration, formatElapsed, parseDuration } from "./duration.ts";

Deno.test("parseDuration() reads units, combinations and bare seconds", async (t) => {
  const table: [string, number | undefined][] = [
    ["500ms", 500],
    ["30s", 30_000],
    ["2m", 120_000],
    ["6h", 21_600_000],
    ["24h", 86_400_000],
    ["30d", 2_592_000_000],
    ["1h30m", 5_400_000],
    ["1d12h", 129_600_000],
    ["1m30s500ms", 90_500],
    ["1.5s", 1500],
    ["90", 90_000],
    ["0.25", 250],
    ["0", 0],
    ["", undefined],
    ["abc", undefined],
    ["5x", undefined],
    ["-5s", undefined],
    ["1h 30m", undefined],
    ["s", undefined],
  ];
  for (const [text, ms] of table) {
    await t.step(JSON.stringify(text), () => assertEquals(parseDuration(text), ms));
  }
});

Deno.test("formatDuration() prints durations the way users type them", () => {
  assertEquals(
    [500, 1500, 2000, 60_000, 90_000, 300_000, 5_400_000, 2_592_000_000].map(formatDuration),
    ["500ms", "1.5s", "2s", "1m", "1m30s", "5m", "1h30m", "30d"],
  );
  assertEquals(formatElapsed(6149), "6.1s");
});
