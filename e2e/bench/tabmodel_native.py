"""The native anchor for the in-tab model bench: the same GGUF file, the
same chat messages, context and thread count, run by llama.cpp through
llama-cpp-python (built by `cargo xtask bench`, never by the tests).
Flash attention is on, as wllama's llama.cpp turns it on for the CPU.

Prints one JSON object: load time, and prompt and generation speed from
llama.cpp's own counters (llama_perf_context), median over the runs that
follow `warmup` answers left out.
"""
import json
import statistics
import sys
import time

from llama_cpp import Llama, llama_perf_context, llama_perf_context_reset


def main():
    spec = json.loads(sys.argv[1])
    started = time.perf_counter()
    llm = Llama(
        model_path=spec["model"],
        n_ctx=spec["context"],
        n_threads=spec["threads"],
        n_threads_batch=spec["threads"],
        n_gpu_layers=0,
        flash_attn=True,
        verbose=False,
    )
    load_ms = (time.perf_counter() - started) * 1000
    prompt, generate = [], []
    prompt_n = output_n = 0
    warmup = spec.get("warmup", 0)
    for run in range(warmup + spec["runs"]):
        # A fresh cache each run, as the tab's measurement starts fresh.
        llm.reset()
        llama_perf_context_reset(llm._ctx.ctx)
        llm.create_chat_completion(
            messages=spec["messages"],
            max_tokens=spec["max_tokens"],
            temperature=0,
        )
        p = llama_perf_context(llm._ctx.ctx)
        if run < warmup:
            continue
        prompt_n, output_n = p.n_p_eval, p.n_eval
        prompt.append(p.n_p_eval / (p.t_p_eval_ms / 1000))
        generate.append(p.n_eval / (p.t_eval_ms / 1000))
    print(
        json.dumps(
            {
                "load_ms": load_ms,
                "prompt_tokens": prompt_n,
                "prompt_per_second": statistics.median(prompt),
                "output_tokens": output_n,
                "output_per_second": statistics.median(generate),
                "threads": spec["threads"],
            }
        )
    )


if __name__ == "__main__":
    main()
