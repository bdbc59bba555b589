import { assert, assertEquals, assertStringIncludes, assertThrows } from "../../tests/_assert.ts";
import { optionsOf, parseError } from "../../tests/_kit.ts";
import type { NtpOptions } from "./mod.ts";
import {
  formatOffset,
  offsetAndDelay,
  PACKET_BYTES,
  parseAnswer,
  readTimestamp,
  request,
  transmitHex,
  unsynchronised,
  writeTimestamp,
} from "./sntp.ts";

Deno.test("ntp parse() defaults to port 123 and --max-offset 1s", () => {
  assertEquals(optionsOf<NtpOptions>(["ntp", "time.example"]), {
    hp: { hostname: "time.example", port: 123 },
    maxOffsetMs: 1000,
    maxStratum: undefined,
  });
  assertEquals(
    optionsOf<NtpOptions>(["ntp", "[::1]:1123", "--max-offset", "50ms", "--max-stratum", "3"]),
    { hp: { hostname: "::1", port: 1123 }, maxOffsetMs: 50, maxStratum: 3 },
  );
  assertEquals(
    parseError(["ntp", "h", "--max-stratum", "0"]),
    'waitcmd: condition 1 (ntp): --max-stratum: expected a whole number from 1 to 15, got "0" (see: waitcmd help ntp)',
  );
});

Deno.test("writeTimestamp() and readTimestamp() round-trip, across the 2036 era change", () => {
  const view = new DataView(new ArrayBuffer(8));
  for (const ms of [Date.UTC(2026, 10, 23, 12, 0, 0, 250), Date.UTC(2040, 0, 1)]) {
    writeTimestamp(view, 0, ms);
    assert(Math.abs(readTimestamp(view, 0) - ms) < 0.001, `${ms}`);
  }
});

Deno.test("request() is a version 4 client packet stamped with its transmit time", () => {
  const p = request(Date.UTC(2026, 0, 1));
  assertEquals([p.length, p[0]], [PACKET_BYTES, 0x23]);
  assertEquals(transmitHex(p).length, 16);
});

/** A server answer for tests: leap, stratum, times T2/T3, originate copied from `req`. */
function answer(req: Uint8Array, o: { leap?: number; stratum?: number; t2: number; t3: number }) {
  const out = new Uint8Array(PACKET_BYTES);
  const v = new DataView(out.buffer);
  out[0] = ((o.leap ?? 0) << 6) | (4 << 3) | 4;
  out[1] = o.stratum ?? 2;
  out.set(new TextEncoder().encode("DENY"), 12);
  out.set(req.subarray(40, 48), 24);
  writeTimestamp(v, 32, o.t2);
  writeTimestamp(v, 40, o.t3);
  return out;
}

Deno.test("parseAnswer() and offsetAndDelay() give the RFC 4330 offset and delay", () => {
  const t1 = Date.UTC(2026, 5, 1);
  const req = request(t1);
  const a = parseAnswer(answer(req, { t2: t1 + 1010, t3: t1 + 1012 }));
  assertEquals([a.mode, a.version, a.leap, a.stratum], [4, 4, 0, 2]);
  assertEquals(a.originateHex, transmitHex(req));
  const { offsetMs, delayMs } = offsetAndDelay(t1, a, t1 + 20);
  assert(Math.abs(offsetMs - 1001) < 0.01, `offset ${offsetMs}`);
  assert(Math.abs(delayMs - 18) < 0.01, `delay ${delayMs}`);
});

Deno.test("parseAnswer() rejects short packets and non-server modes", () => {
  assertStringIncludes(
    assertThrows(() => parseAnswer(new Uint8Array(12)), Error).message,
    "not an NTP answer (12 B",
  );
  const p = request(0);
  assertStringIncludes(
    assertThrows(() => parseAnswer(p), Error).message,
    "not an NTP server answer (mode 3)",
  );
});

Deno.test("unsynchronised() names leap 3, stratum 0 with its kiss code and stratum 16", () => {
  const req = request(0);
  const of = (leap: number, stratum: number) =>
    unsynchronised(parseAnswer(answer(req, { leap, stratum, t2: 0, t3: 0 })));
  assertEquals(of(3, 2), "server clock not synchronised (leap indicator 3)");
  assertEquals(of(0, 0), "server clock not synchronised (stratum 0, kiss code DENY)");
  assertEquals(of(0, 16), "server clock not synchronised (stratum 16)");
  assertEquals(of(1, 15), undefined);
});

Deno.test("formatOffset() signs and scales", () => {
  assertEquals(formatOffset(0.4123), "+0.412ms");
  assertEquals(formatOffset(-2500), "-2.500s");
});
