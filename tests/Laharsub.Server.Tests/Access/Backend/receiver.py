#!/usr/bin/env python3
"""An application's authorization endpoint for Backend mode's tests: a separate process, as a real backend is.

POST /authorize with {"operation": ..., "topicId": ..., "label": ...} and the caller's Authorization
("Bearer <user>") or Cookie ("user=<user>"): a user may do anything on the topics labelled "<user>-...", and
list. User "slow" is answered after 30 s, "broken" with a 500. GET /calls: how many questions were asked, and
each question with its answer (for a failing test's message).
Prints "listening <port>" once it listens on 127.0.0.1.
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

calls = 0
questions = []
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        with lock:
            self.answer(200, {"calls": calls, "questions": list(questions)})

    def do_POST(self):
        global calls
        question = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        with lock:
            calls += 1
        authorization = self.headers.get("Authorization") or ""
        cookie = self.headers.get("Cookie") or ""
        user = authorization[len("Bearer "):] if authorization.startswith("Bearer ") else None
        if user is None and cookie.startswith("user="):
            user = cookie[len("user="):]
        if user == "slow":
            time.sleep(30)
        if user == "broken":
            self.answer(500, {"error": "down"})
            return
        label = question.get("label") or ""
        allowed = user is not None and (label.startswith(user + "-")
                                        or (question["operation"] == "list" and "topicId" not in question))
        with lock:
            questions.append({"user": user, "question": question, "allow": allowed})
        self.answer(200, {"allow": allowed, "cacheSeconds": 60})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"listening {server.server_address[1]}", flush=True)
server.serve_forever()
