"""The independent WebSocket server of waitcmd's websocket tests (Python's
`websockets`, installed by scripts/services/build-pyws.sh).

    python server.py [--port N] [--cert PEM --key PEM] [--require-header 'Name: value']
                     [--close-code-file PATH]

Listens on 127.0.0.1 (wss:// with --cert and --key) and prints `ready PORT`.
Paths: /echo echoes every message; /greet sends `hello from websockets` at
once; /deny refuses the upgrade with 403; /close?code=N&reason=R&greet=T sends
T (when given), then closes with code N (default 1000) and reason R;
/closefile closes with the code written in --close-code-file (1000 while the
file is missing or empty). Pings are answered by websockets itself. Offers the
subprotocol `chat.v1`. With --require-header, an upgrade without that header is
refused with 401.
"""

import argparse
import asyncio
import http
import ssl
import sys
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import serve


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--require-header")
    ap.add_argument("--close-code-file")
    args = ap.parse_args()
    want = None
    if args.require_header:
        name, _, value = args.require_header.partition(":")
        want = (name.strip(), value.strip())

    def process_request(connection, request):
        if request.path == "/deny":
            return connection.respond(http.HTTPStatus.FORBIDDEN, "denied\n")
        if want and request.headers.get(want[0]) != want[1]:
            return connection.respond(http.HTTPStatus.UNAUTHORIZED, "no token\n")
        return None

    def select_subprotocol(connection, offered):
        # chat.v1 when offered; none otherwise (a client offering none is accepted).
        return "chat.v1" if "chat.v1" in offered else None

    def file_code():
        try:
            with open(args.close_code_file) as f:
                text = f.read().strip()
        except (OSError, TypeError):
            text = ""
        return int(text) if text else 1000

    async def handler(ws):
        url = urlsplit(ws.request.path)
        if url.path == "/close":
            q = parse_qs(url.query)
            if "greet" in q:
                await ws.send(q["greet"][0])
            await ws.close(int(q.get("code", ["1000"])[0]), q.get("reason", [""])[0])
            return
        if url.path == "/closefile":
            await ws.close(file_code(), "from file")
            return
        if ws.request.path == "/greet":
            await ws.send("hello from websockets")
        async for message in ws:
            await ws.send(message)

    ctx = None
    if args.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.cert, args.key)

    async def run():
        async with serve(
            handler,
            "127.0.0.1",
            args.port,
            ssl=ctx,
            select_subprotocol=select_subprotocol,
            process_request=process_request,
        ) as server:
            port = server.sockets[0].getsockname()[1]
            print(f"ready {port}", flush=True)
            await asyncio.get_running_loop().create_future()

    asyncio.run(run())


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
