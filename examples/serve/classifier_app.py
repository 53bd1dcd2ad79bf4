"""A compiled Stagegraph classifier on Ray Serve: requests are batched along the
entry's symbolic batch dim N (examples/layers.py: classify(x: f32[N, 16]) -> f32[N, 4]).

    graph-compile examples/layers.py --weights layers.safetensors -o /tmp/classifier.sgraph
    cd examples/serve && serve run classifier_app:app sgraph=/tmp/classifier.sgraph
    curl -H 'Content-Type: application/json' -d '{"x": [[0.5, ...16 numbers]]}' localhost:8000/
    curl -H 'Content-Type: application/x-npy' --data-binary @x.npy localhost:8000/ > y.npy

The tuning knobs (docs/deployment.md) are the deployment options and its user_config.
"""
import io
import json

import numpy as np
import stagegraph as sg
from ray import serve
from starlette.requests import Request
from starlette.responses import JSONResponse, Response


def run_rows(run, x):
    """The entry on the rows of x. The dense GEMM sums a lone row tile (M % MR == 1,
    MR = 6 or 8) in four interleaved partial sums, so an odd row count is padded by
    one zero row: a row's bits then never depend on which requests share its batch."""
    if len(x) % 2 == 0:
        return run(x)
    return run(np.concatenate([x, np.zeros_like(x[:1])]))[:len(x)]


@serve.deployment(num_replicas=2, ray_actor_options={"num_cpus": 1}, max_ongoing_requests=64,
                  user_config={"max_batch_size": 16, "batch_wait_timeout_s": 0.002})
class Classifier:
    def __init__(self, graph: bytes, entry: str = "classify", threads: int = 1):
        program = sg.load(graph)
        self.width = program.entries[0].inputs[0].shape[1]
        self.run = getattr(program.session(threads=threads), entry)

    def reconfigure(self, config: dict):
        self.classify.set_max_batch_size(config["max_batch_size"])
        self.classify.set_batch_wait_timeout_s(config["batch_wait_timeout_s"])

    # max_batch_size counts requests; max_batch_size=1 turns batching off.
    @serve.batch(max_batch_size=16, batch_wait_timeout_s=0.002)
    async def classify(self, xs: list) -> list:
        return np.split(run_rows(self.run, np.concatenate(xs)), np.cumsum([len(x) for x in xs])[:-1])

    async def __call__(self, request: Request):
        as_json = request.headers.get("content-type", "").startswith("application/json")
        body = await request.body()
        try:
            x = np.asarray(json.loads(body)["x"], np.float32) if as_json else np.load(io.BytesIO(body))
        except (ValueError, KeyError, TypeError) as e:
            return Response(f"bad request: {e}\n", status_code=400)
        if x.dtype != np.float32 or x.ndim != 2 or x.shape[1] != self.width:
            return Response(f"x must be f32[N, {self.width}], not {x.dtype}{list(x.shape)}\n", status_code=400)
        y = await self.classify(x)
        if as_json:
            return JSONResponse({"y": y.tolist()})
        out = io.BytesIO()
        np.save(out, y)
        return Response(out.getvalue(), media_type="application/x-npy")


def app(args: dict):
    """serve run / a RayService's import_path. The graph travels as bytes in the
    deployment's arguments, so worker machines need no copy of the file."""
    with open(args["sgraph"], "rb") as f:
        graph = f.read()
    return Classifier.options(num_replicas=int(args.get("replicas", 2))).bind(
        graph, threads=int(args.get("threads", 1)))
