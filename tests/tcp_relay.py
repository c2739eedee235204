"""A TCP relay on 127.0.0.1 for tests: it forwards to a real server until told to refuse
requests, then it hangs up on every new request (new connections, and bytes a client sends
on a connection it already has) while the responses already streaming keep flowing, the
way a proxy or load balancer in front of a restarting server behaves. (``tests/`` is on
sys.path through the rootdir conftest.)"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress

__all__ = ["TcpRelay", "tcp_relay"]


class TcpRelay:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.refusing = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, name="tcp-relay", daemon=True).start()

    def refuse_requests(self) -> None:
        self.refusing.set()

    def forward_again(self) -> None:
        self.refusing.clear()

    def close(self) -> None:
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                with suppress(OSError):
                    sock.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            if self.refusing.is_set():
                client.close()
                continue
            try:
                server = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets |= {client, server}
            pair = (client, server)
            threading.Thread(target=self._pump, args=(*pair, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, from_client: bool) -> None:
        try:
            while data := source.recv(65536):
                if from_client and self.refusing.is_set():
                    break  # a new request: hang up without an answer
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with suppress(OSError):
                sock.close()


@contextmanager
def tcp_relay(target_port: int) -> Iterator[TcpRelay]:
    relay = TcpRelay(target_port)
    try:
        yield relay
    finally:
        relay.close()
