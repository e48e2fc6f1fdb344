// Hearth's engine for the model in the tab: llama.cpp behind a small C API
// that public/tabmodel/worker.js calls. One model and one conversation at a
// time; every call runs on the worker's own thread, and the matrix work
// runs on a fixed pool of threads created with the model.
//
// Strings go in and out as UTF-8 JSON. A call returns at most one step of
// work (a slice of the prompt, or one token), so the worker can post
// progress and read Stop between calls.
//
//   hl_load(path, n_ctx, pool, threads, template)
//                                        load a GGUF file (with a chat
//                                        template in place of its own, if
//                                        not empty); 0 or -1
//   hl_info()                            the loaded model, as JSON
//   hl_set_threads(n)                    threads for the next steps
//   hl_start(body)                       an OpenAI-style chat body (or
//                                        {"prompt": "..."} for raw text):
//                                        template, tokens, sampler; JSON
//   hl_prompt(n)                         process up to n prompt tokens;
//                                        the number left, or -1
//   hl_next()                            one token: JSON with the chunks
//                                        to stream and whether it is done
//   hl_finish(reason)                    end the request early (Stop)
//   hl_bench(n_prompt, n_gen)            llama-bench's two measurements
//   hl_profile(n_prompt)                 where a prompt's time goes, by
//                                        kind of operation (the bench)
//   hl_error()                           the last error's message
//   hl_unload()                          free everything
//
// The chunks are OpenAI `chat.completion.chunk` objects with llama.cpp's
// `timings` on each, as llama-server streams them, so the app decodes them
// like any OpenAI-compatible stream.

#include "chat.h"
#include "common.h"
#include "ggml-cpu.h"
#include "llama.h"
#include "sampling.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#define HL_EXPORT extern "C" EMSCRIPTEN_KEEPALIVE
#else
#define HL_EXPORT extern "C"
#endif

using json = nlohmann::ordered_json;

namespace {

// Tells the worker how far a load has come (0 to 1).
void report_progress(float p) {
#ifdef __EMSCRIPTEN__
    EM_ASM({ if (Module.hearthProgress) Module.hearthProgress($0); }, p);
#else
    (void) p;
#endif
}

// One request in flight.
struct Request {
    std::vector<llama_token> prompt;
    size_t                   n_cached = 0;  // prompt tokens already in the KV cache
    size_t                   n_done   = 0;  // prompt tokens in the cache so far
    common_sampler *         sampler  = nullptr;
    common_chat_parser_params parser;
    bool                     chat = true;  // false: raw text, no template
    bool                     tools = false;
    std::set<llama_token>    preserved;
    std::vector<std::string> stops;
    int                      n_predict = 1024;
    std::string              text;       // everything generated
    size_t                   sent = 0;   // bytes of `text` parsed and streamed
    common_chat_msg          msg;        // the reply as parsed so far
    std::vector<std::string> call_ids;
    std::vector<llama_token> generated;
    bool                     first_chunk = true;
    int64_t                  t_start_us   = 0;
    int64_t                  t_prompt_us  = 0;  // when the prompt was done
    int64_t                  t_last_us    = 0;
    int                      n_predicted  = 0;
    bool                     done = false;
    std::string              id;
};

struct Engine {
    llama_model *             model    = nullptr;
    llama_context *           ctx      = nullptr;
    const llama_vocab *       vocab    = nullptr;
    ggml_threadpool *         pool     = nullptr;
    common_chat_templates_ptr templates;
    int                       n_pool    = 1;
    int                       n_threads = 1;
    std::vector<llama_token>  cache;  // the tokens in the KV cache, in order
    Request *                 req = nullptr;
    std::string               out;    // the last string returned
    std::string               error;
    std::string               log_tail;  // llama.cpp's last error lines
};

Engine E;

// Timing of each graph node while profiling: llama.cpp's scheduler then
// computes the graph one node at a time and calls back after each, so the
// time between two calls is that node's.
struct Profile {
    bool                          on = false;
    int64_t                       last_us = 0;
    std::map<std::string, double> ms;
};

Profile P;

// The kind of work a node is, as the profile reports it: products by the
// type of their weights (the output layer apart, and attention's own
// products of activations), everything else by ggml's name for the
// operation. A product's time includes quantizing its activations.
std::string node_kind(const ggml_tensor * t) {
    const std::string name = t->name;
    switch (t->op) {
        case GGML_OP_MUL_MAT:
        case GGML_OP_MUL_MAT_ID:
            if (name.rfind("result_output", 0) == 0) {
                return std::string("output layer ") + ggml_type_name(t->src[0]->type);
            }
            if (name.find("kq") != std::string::npos) {
                return "attention products";
            }
            return std::string("weights ") + ggml_type_name(t->src[0]->type);
        default:
            return ggml_op_desc(t);
    }
}

bool on_node(ggml_tensor * t, bool ask, void *) {
    if (!P.on) {
        return false;
    }
    if (ask) {
        return true;
    }
    const int64_t now = ggml_time_us();
    P.ms[node_kind(t)] += (now - P.last_us) / 1000.0;
    P.last_us = now;
    return true;
}

void on_log(ggml_log_level level, const char * text, void *) {
    if (level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN) {
        E.log_tail += text;
        if (E.log_tail.size() > 2000) {
            E.log_tail.erase(0, E.log_tail.size() - 2000);
        }
    }
}

const char * ret(const std::string & s) {
    E.out = s;
    return E.out.c_str();
}

const char * fail(const std::string & type, const std::string & message) {
    E.error = message;
    json j  = { { "error", { { "type", type }, { "message", message } } } };
    return ret(j.dump());
}

void end_request() {
    if (E.req) {
        if (E.req->sampler) {
            common_sampler_free(E.req->sampler);
        }
        delete E.req;
        E.req = nullptr;
    }
}

// The bytes of `s` from `from` that form whole UTF-8 characters: a token
// may end inside one, and half a character is never streamed.
size_t utf8_complete(const std::string & s, size_t from) {
    size_t end = s.size();
    // Look back at most 3 bytes for the start of an unfinished character.
    for (size_t back = 1; back <= 4 && back <= end - from; back++) {
        unsigned char c = (unsigned char) s[end - back];
        if ((c & 0xC0) == 0x80) {
            continue;  // a continuation byte
        }
        size_t need = (c & 0x80) == 0 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
        return need > back ? end - back : end;
    }
    return end;
}

// Where a stop string starts in `text` at or after `from`, or npos.
size_t find_stop(const std::string & text, const std::vector<std::string> & stops, size_t from, size_t & len) {
    size_t best = std::string::npos;
    for (const auto & s : stops) {
        if (s.empty()) {
            continue;
        }
        size_t start = from > s.size() ? from - s.size() : 0;
        size_t at    = text.find(s, start);
        if (at != std::string::npos && (best == std::string::npos || at < best)) {
            best = at;
            len  = s.size();
        }
    }
    return best;
}

// How many bytes at the end of `text` could be the start of a stop string:
// they are held back until the next token says which.
size_t partial_stop(const std::string & text, const std::vector<std::string> & stops) {
    size_t held = 0;
    for (const auto & s : stops) {
        for (size_t n = std::min(s.size() - 1, text.size()); n > held; n--) {
            if (text.compare(text.size() - n, n, s, 0, n) == 0) {
                held = n;
                break;
            }
        }
    }
    return held;
}

json timings(const Request & r, int64_t now) {
    const int64_t t_prompt   = (r.t_prompt_us ? r.t_prompt_us : now) - r.t_start_us;
    const double  prompt_ms  = t_prompt / 1000.0;
    const size_t  processed  = r.n_done - r.n_cached;
    const double  gen_ms     = r.t_prompt_us ? (now - r.t_prompt_us) / 1000.0 : 0.0;
    json          t;
    // prompt_n counts every token of the prompt, cached or not, so the
    // same conversation always reports the same input; prompt_per_second
    // is over the tokens actually processed.
    t["prompt_n"]             = r.prompt.size();
    t["cache_n"]              = r.n_cached;
    t["prompt_ms"]            = prompt_ms;
    t["prompt_per_second"]    = prompt_ms > 0 ? processed * 1000.0 / prompt_ms : 0.0;
    t["predicted_n"]          = r.n_predicted;
    t["predicted_ms"]         = gen_ms;
    t["predicted_per_second"] = gen_ms > 0 ? r.n_predicted * 1000.0 / gen_ms : 0.0;
    return t;
}

json chunk(const Request & r, const json & delta, const json & finish, int64_t now) {
    json c;
    c["id"]      = r.id;
    c["object"]  = "chat.completion.chunk";
    c["choices"] = json::array({ { { "index", 0 }, { "delta", delta }, { "finish_reason", finish } } });
    c["timings"] = timings(r, now);
    return c;
}

// The OpenAI deltas that take the reply from what was streamed to `msg`.
void diffs_to_chunks(Request & r, const common_chat_msg & msg, json & chunks, int64_t now) {
    for (const auto & d : common_chat_msg_diff::compute_diffs(r.msg, msg)) {
        json delta = json::object();
        if (r.first_chunk) {
            delta["role"] = "assistant";
            r.first_chunk = false;
        }
        if (!d.reasoning_content_delta.empty()) {
            delta["reasoning_content"] = d.reasoning_content_delta;
        }
        if (!d.content_delta.empty()) {
            delta["content"] = d.content_delta;
        }
        if (d.tool_call_index != std::string::npos) {
            json call = { { "index", d.tool_call_index } };
            if (!d.tool_call_delta.id.empty()) {
                call["id"]   = d.tool_call_delta.id;
                call["type"] = "function";
            }
            json fn = json::object();
            if (!d.tool_call_delta.name.empty()) {
                fn["name"] = d.tool_call_delta.name;
            }
            fn["arguments"]    = d.tool_call_delta.arguments;
            call["function"]   = fn;
            delta["tool_calls"] = json::array({ call });
        }
        chunks.push_back(chunk(r, delta, nullptr, now));
    }
    r.msg = msg;
}

std::string new_call_id() {
    static std::mt19937                    rng(std::random_device{}());
    static const char                      chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::uniform_int_distribution<int>     pick(0, (int) sizeof(chars) - 2);
    std::string                            id = "call_";
    for (int i = 0; i < 24; i++) {
        id += chars[pick(rng)];
    }
    return id;
}

// Parses what is safe to show of the text so far and streams the change.
void stream_text(Request & r, size_t upto, bool final, json & chunks, int64_t now) {
    if (!r.chat) {
        if (upto > r.sent) {
            json delta = json::object();
            if (r.first_chunk) {
                delta["role"] = "assistant";
                r.first_chunk = false;
            }
            delta["content"] = r.text.substr(r.sent, upto - r.sent);
            chunks.push_back(chunk(r, delta, nullptr, now));
            r.sent = upto;
        }
        return;
    }
    if (upto == r.sent && !final) {
        return;
    }
    r.sent              = upto;
    common_chat_msg msg = common_chat_parse(r.text.substr(0, upto), !final, r.parser);
    if (msg.empty() && !final) {
        return;
    }
    msg.set_tool_call_ids(r.call_ids, new_call_id);
    diffs_to_chunks(r, msg, chunks, now);
}

void fill_sampling(common_params_sampling & s, const json & body) {
    auto num = [&](const char * k, auto & field) {
        if (body.contains(k) && body[k].is_number()) {
            field = body[k].get<std::remove_reference_t<decltype(field)>>();
        }
    };
    num("temperature", s.temp);
    num("top_p", s.top_p);
    num("top_k", s.top_k);
    num("min_p", s.min_p);
    num("repeat_penalty", s.penalty_repeat);
    num("presence_penalty", s.penalty_present);
    num("frequency_penalty", s.penalty_freq);
    if (body.contains("seed") && body["seed"].is_number_integer()) {
        s.seed = body["seed"].get<uint32_t>();
    }
}

bool decode(const llama_token * tokens, int n) {
    llama_batch batch = llama_batch_get_one(const_cast<llama_token *>(tokens), n);
    int         rc    = llama_decode(E.ctx, batch);
    if (rc != 0) {
        E.error = rc == 1 ? "the context is full (no room in the KV cache)" : "llama_decode failed (" + std::to_string(rc) + ")";
        if (!E.log_tail.empty()) {
            E.error += ": " + E.log_tail;
        }
        return false;
    }
    E.cache.insert(E.cache.end(), tokens, tokens + n);
    return true;
}

}  // namespace

HL_EXPORT const char * hl_error() {
    return E.error.c_str();
}

HL_EXPORT void hl_unload() {
    end_request();
    if (E.ctx) {
        llama_free(E.ctx);
        E.ctx = nullptr;
    }
    if (E.pool) {
        ggml_threadpool_free(E.pool);
        E.pool = nullptr;
    }
    E.templates.reset();
    if (E.model) {
        llama_model_free(E.model);
        E.model = nullptr;
    }
    E.cache.clear();
}

HL_EXPORT int hl_load(const char * path, int n_ctx, int n_pool, int n_threads, const char * chat_template) {
    static bool initialised = false;
    if (!initialised) {
        llama_log_set(on_log, nullptr);
        llama_backend_init();
        initialised = true;
    }
    hl_unload();
    E.error.clear();
    E.log_tail.clear();
    try {
        llama_model_params mp = llama_model_default_params();
        // Read into memory: the file is a Blob (WORKERFS), nothing to map.
        mp.load_mode          = LLAMA_LOAD_MODE_NONE;
        mp.n_gpu_layers       = 0;
        mp.progress_callback  = [](float p, void *) {
            report_progress(p);
            return true;
        };
        E.model = llama_model_load_from_file(path, mp);
        if (!E.model) {
            E.error = "llama.cpp could not load the model" + (E.log_tail.empty() ? std::string() : ": " + E.log_tail);
            return -1;
        }
        E.vocab = llama_model_get_vocab(E.model);

        E.n_pool                       = std::max(1, n_pool);
        E.n_threads                    = std::clamp(n_threads, 1, E.n_pool);
        ggml_threadpool_params tpp     = ggml_threadpool_params_default(E.n_pool);
        E.pool                         = ggml_threadpool_new(&tpp);
        if (!E.pool) {
            E.error = "could not start " + std::to_string(E.n_pool) + " threads";
            hl_unload();
            return -1;
        }

        llama_context_params cp = llama_context_default_params();
        cp.n_ctx                = n_ctx;
        cp.n_batch              = 512;
        cp.n_ubatch             = 512;
        cp.n_seq_max            = 1;
        cp.n_threads            = E.n_threads;
        cp.n_threads_batch      = E.n_threads;
        cp.no_perf              = true;
        cp.cb_eval              = on_node;
        E.ctx                   = llama_init_from_model(E.model, cp);
        if (!E.ctx) {
            E.error = "could not create the model's context of " + std::to_string(n_ctx) + " tokens" +
                      (E.log_tail.empty() ? std::string() : ": " + E.log_tail);
            hl_unload();
            return -1;
        }
        llama_attach_threadpool(E.ctx, E.pool, E.pool);
        E.templates = common_chat_templates_init(E.model, chat_template ? chat_template : "");
    } catch (const std::exception & e) {
        E.error = e.what();
        hl_unload();
        return -1;
    }
    return 0;
}

HL_EXPORT const char * hl_info() {
    if (!E.model) {
        return fail("load_error", "no model is loaded");
    }
    char desc[256];
    llama_model_desc(E.model, desc, sizeof(desc));
    json j;
    j["desc"]        = desc;
    j["n_ctx"]       = llama_n_ctx(E.ctx);
    j["n_ctx_train"] = llama_model_n_ctx_train(E.model);
    j["n_params"]    = llama_model_n_params(E.model);
    j["size"]        = llama_model_size(E.model);
    j["threads"]     = E.n_threads;
    j["pool"]        = E.n_pool;
    try {
        auto caps      = common_chat_templates_get_caps(E.templates.get());
        j["tools"]     = caps["supports_tool_calls"];
    } catch (...) {
        j["tools"] = false;
    }
    return ret(j.dump());
}

HL_EXPORT int hl_set_threads(int n) {
    if (!E.ctx) {
        return -1;
    }
    E.n_threads = std::clamp(n, 1, E.n_pool);
    llama_set_n_threads(E.ctx, E.n_threads, E.n_threads);
    return E.n_threads;
}

HL_EXPORT const char * hl_start(const char * body_text) {
    end_request();
    E.error.clear();
    E.log_tail.clear();
    if (!E.ctx) {
        return fail("load_error", "no model is loaded");
    }
    auto * r = new Request();
    E.req    = r;
    try {
        json body = json::parse(body_text);
        r->id     = "chatcmpl-hearth";
        if (body.contains("max_tokens") && body["max_tokens"].is_number_integer()) {
            r->n_predict = body["max_tokens"].get<int>();
        }
        common_params_sampling sp;
        fill_sampling(sp, body);
        std::string prompt;
        std::vector<llama_token> prompt_tokens;
        if (body.contains("prompt")) {
            // Raw text or token ids, no chat template: the bench and the
            // tests.
            r->chat = false;
            if (body["prompt"].is_array()) {
                const int n_vocab = llama_vocab_n_tokens(E.vocab);
                for (const auto & t : body["prompt"]) {
                    int id = t.get<int>();
                    if (id < 0 || id >= n_vocab) {
                        return fail("inference_error", "a prompt token is outside the vocabulary");
                    }
                    prompt_tokens.push_back(id);
                }
            } else {
                prompt = body["prompt"].get<std::string>();
            }
        } else {
            common_chat_templates_inputs in;
            // common's own JSON type reads the parts it parses.
            in.messages  = common_chat_msgs_parse_oaicompat(common_json::parse(body.at("messages").dump()));
            json tools   = body.value("tools", json::array());
            in.tools     = common_chat_tools_parse_oaicompat(common_json::parse(tools.dump()));
            in.tool_choice = common_chat_tool_choice_parse_oaicompat(body.value("tool_choice", std::string("auto")));
            in.use_jinja = true;
            in.add_generation_prompt = true;
            in.reasoning_format      = COMMON_REASONING_FORMAT_DEEPSEEK;
            in.parallel_tool_calls   = body.value("parallel_tool_calls", false);
            r->tools                 = !in.tools.empty() && in.tool_choice != COMMON_CHAT_TOOL_CHOICE_NONE;
            common_chat_params cp    = common_chat_templates_apply(E.templates.get(), in);
            prompt                   = cp.prompt;
            r->parser                = common_chat_parser_params(cp);
            r->parser.reasoning_format = COMMON_REASONING_FORMAT_DEEPSEEK;
            r->parser.parse_tool_calls = r->tools;
            if (!cp.parser.empty()) {
                r->parser.parser.load(cp.parser);
            }
            r->stops = cp.additional_stops;
            for (const auto & t : cp.preserved_tokens) {
                auto ids = common_tokenize(E.vocab, t, false, true);
                if (ids.size() == 1) {
                    r->preserved.insert(ids[0]);
                    sp.preserved_tokens.insert(ids[0]);
                }
            }
            if (!cp.grammar.empty()) {
                sp.grammar      = common_grammar(COMMON_GRAMMAR_TYPE_TOOL_CALLS, cp.grammar);
                sp.grammar_lazy = cp.grammar_lazy;
                for (const auto & t : cp.grammar_triggers) {
                    if (t.type == COMMON_GRAMMAR_TRIGGER_TYPE_WORD) {
                        auto ids = common_tokenize(E.vocab, t.value, false, true);
                        if (ids.size() == 1 && sp.preserved_tokens.count(ids[0])) {
                            common_grammar_trigger tt;
                            tt.type  = COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN;
                            tt.value = t.value;
                            tt.token = ids[0];
                            sp.grammar_triggers.push_back(tt);
                            continue;
                        }
                    }
                    sp.grammar_triggers.push_back(t);
                }
            }
            sp.generation_prompt = cp.generation_prompt;
        }
        if (body.contains("stop")) {
            const auto & s = body["stop"];
            if (s.is_string()) {
                r->stops.push_back(s.get<std::string>());
            } else if (s.is_array()) {
                for (const auto & x : s) {
                    if (x.is_string()) {
                        r->stops.push_back(x.get<std::string>());
                    }
                }
            }
        }

        if (body.value("ignore_eos", false)) {
            // The bench's fixed-length runs: end-of-generation never wins.
            const int n_vocab = llama_vocab_n_tokens(E.vocab);
            for (llama_token t = 0; t < n_vocab; t++) {
                if (llama_vocab_is_eog(E.vocab, t)) {
                    sp.logit_bias.push_back({ t, -INFINITY });
                }
            }
        }

        r->prompt = prompt_tokens.empty() ? common_tokenize(E.vocab, prompt, true, true) : prompt_tokens;
        if (r->prompt.empty()) {
            return fail("inference_error", "the prompt is empty");
        }
        const size_t n_ctx = llama_n_ctx(E.ctx);
        if (r->prompt.size() + 1 > n_ctx) {
            return fail("inference_error", "the request (" + std::to_string(r->prompt.size()) +
                                               " tokens) exceeds the available context size (" + std::to_string(n_ctx) +
                                               " tokens)");
        }

        // Keep what the cache already holds of this prompt; at least the
        // last token is decoded again, for its logits.
        size_t keep = 0;
        while (keep < E.cache.size() && keep < r->prompt.size() && E.cache[keep] == r->prompt[keep]) {
            keep++;
        }
        if (keep == r->prompt.size()) {
            keep--;
        }
        llama_memory_t mem = llama_get_memory(E.ctx);
        if (!llama_memory_seq_rm(mem, 0, (llama_pos) keep, -1)) {
            llama_memory_clear(mem, true);
            keep = 0;
        }
        E.cache.resize(keep);
        r->n_cached = keep;
        r->n_done   = keep;

        r->sampler = common_sampler_init(E.model, sp);
        if (!r->sampler) {
            return fail("inference_error", "the sampler could not be set up (a tool grammar failed to parse?)");
        }
        // The sampler's repetition penalties see the whole prompt.
        for (auto t : r->prompt) {
            common_sampler_accept(r->sampler, t, false);
        }
        r->t_start_us = ggml_time_us();
        json j;
        j["prompt_tokens"] = r->prompt.size();
        j["cached"]        = keep;
        j["tools"]         = r->tools;
        return ret(j.dump());
    } catch (const std::exception & e) {
        end_request();
        return fail("inference_error", e.what());
    }
}

HL_EXPORT int hl_prompt(int max_tokens) {
    Request * r = E.req;
    if (!r) {
        E.error = "no request";
        return -1;
    }
    size_t left = r->prompt.size() - r->n_done;
    if (left == 0) {
        return 0;
    }
    int n = (int) std::min<size_t>(left, std::max(1, max_tokens));
    if (!decode(r->prompt.data() + r->n_done, n)) {
        return -1;
    }
    r->n_done += n;
    left -= n;
    if (left == 0) {
        r->t_prompt_us = ggml_time_us();
        r->t_last_us   = r->t_prompt_us;
    }
    return (int) left;
}

namespace {

const char * finish(Request & r, const std::string & reason, json & chunks, int64_t now) {
    stream_text(r, r.text.size(), true, chunks, now);
    std::string why = reason;
    if (why == "stop" && !r.msg.tool_calls.empty()) {
        why = "tool_calls";
    }
    chunks.push_back(chunk(r, json::object(), why, now));
    r.done = true;
    json j;
    j["chunks"] = chunks;
    j["done"]   = true;
    j["tokens"] = r.generated;
    return ret(j.dump());
}

}  // namespace

HL_EXPORT const char * hl_next() {
    Request * r = E.req;
    if (!r || r->done) {
        return fail("inference_error", "no request is running");
    }
    if (r->n_done < r->prompt.size()) {
        return fail("inference_error", "the prompt is not processed yet");
    }
    try {
        json        chunks = json::array();
        llama_token tok    = common_sampler_sample(r->sampler, E.ctx, -1);
        common_sampler_accept(r->sampler, tok, true);
        int64_t now = ggml_time_us();
        if (llama_vocab_is_eog(E.vocab, tok)) {
            return finish(*r, "stop", chunks, now);
        }
        r->n_predicted++;
        r->generated.push_back(tok);
        const bool special = r->preserved.count(tok) > 0;
        r->text += common_token_to_piece(E.vocab, tok, special);

        // A stop string ends the reply where it starts.
        size_t stop_len = 0;
        size_t stop     = find_stop(r->text, r->stops, r->sent, stop_len);
        if (stop != std::string::npos) {
            r->text.resize(stop);
            return finish(*r, "stop", chunks, now);
        }
        if (r->n_predicted >= r->n_predict || E.cache.size() + 1 >= llama_n_ctx(E.ctx)) {
            return finish(*r, "length", chunks, now);
        }
        size_t safe = utf8_complete(r->text, r->sent);
        safe        = std::min(safe, r->text.size() - partial_stop(r->text, r->stops));
        stream_text(*r, std::max(safe, r->sent), false, chunks, now);

        if (!decode(&tok, 1)) {
            end_request();
            return fail("inference_error", E.error);
        }
        json j;
        j["chunks"] = chunks;
        j["done"]   = false;
        return ret(j.dump());
    } catch (const std::exception & e) {
        end_request();
        return fail("inference_error", e.what());
    }
}

// Ends the request where it stands (Stop): streams what is held back and
// a last chunk with the counts so far.
HL_EXPORT const char * hl_finish(const char * reason) {
    Request * r = E.req;
    if (!r || r->done) {
        return ret("{\"chunks\":[],\"done\":true}");
    }
    json chunks = json::array();
    try {
        if (r->n_done < r->prompt.size()) {
            r->t_prompt_us = ggml_time_us();
        }
        return finish(*r, reason, chunks, ggml_time_us());
    } catch (const std::exception & e) {
        end_request();
        return fail("inference_error", e.what());
    }
}

// llama-bench's two figures on the loaded model: `n_prompt` tokens in one
// batch (prompt processing), then `n_gen` tokens one at a time
// (generation), from an empty cache, with random tokens as llama-bench
// uses. Returns {pp_ms, tg_ms}.
HL_EXPORT const char * hl_bench(int n_prompt, int n_gen) {
    end_request();
    if (!E.ctx) {
        return fail("load_error", "no model is loaded");
    }
    llama_memory_t mem = llama_get_memory(E.ctx);
    llama_memory_clear(mem, true);
    E.cache.clear();
    const int            n_vocab = llama_vocab_n_tokens(E.vocab);
    std::mt19937         rng(42);
    std::vector<llama_token> tokens(std::max(n_prompt, 1));
    for (auto & t : tokens) {
        t = (llama_token) (rng() % n_vocab);
    }
    json j;
    if (n_prompt > 0) {
        const int64_t t0 = ggml_time_us();
        for (int at = 0; at < n_prompt; at += 512) {
            if (!decode(tokens.data() + at, std::min(512, n_prompt - at))) {
                return fail("inference_error", E.error);
            }
        }
        llama_synchronize(E.ctx);
        j["pp_ms"] = (ggml_time_us() - t0) / 1000.0;
    }
    if (n_gen > 0) {
        llama_memory_clear(mem, true);
        E.cache.clear();
        llama_token   t  = tokens[0];
        const int64_t t0 = ggml_time_us();
        for (int i = 0; i < n_gen; i++) {
            if (!decode(&t, 1)) {
                return fail("inference_error", E.error);
            }
            llama_synchronize(E.ctx);
            t = (llama_token) (rng() % n_vocab);
        }
        j["tg_ms"] = (ggml_time_us() - t0) / 1000.0;
    }
    llama_memory_clear(mem, true);
    E.cache.clear();
    return ret(j.dump());
}

// Where the time of a prompt of `n_prompt` random tokens goes, by kind of
// node (weight matrices, attention, the output layer, …), plus the time to
// sample one token. Each node is computed alone while this runs, so the
// total is slower than a real prompt; the shares are what it shows.
HL_EXPORT const char * hl_profile(int n_prompt) {
    end_request();
    if (!E.ctx) {
        return fail("load_error", "no model is loaded");
    }
    llama_memory_t mem = llama_get_memory(E.ctx);
    llama_memory_clear(mem, true);
    E.cache.clear();
    const int                n_vocab = llama_vocab_n_tokens(E.vocab);
    std::mt19937             rng(7);
    std::vector<llama_token> tokens(std::max(n_prompt, 1));
    for (auto & t : tokens) {
        t = (llama_token) (rng() % n_vocab);
    }
    P.ms.clear();
    P.on      = true;
    P.last_us = ggml_time_us();
    const int64_t t0 = P.last_us;
    bool ok = true;
    for (int at = 0; at < (int) tokens.size() && ok; at += 512) {
        ok = decode(tokens.data() + at, std::min(512, (int) tokens.size() - at));
    }
    llama_synchronize(E.ctx);
    P.on = false;
    const double total = (ggml_time_us() - t0) / 1000.0;
    if (!ok) {
        return fail("inference_error", E.error);
    }
    // Sampling one token from the prompt's logits, as a reply does.
    common_params_sampling sp;
    common_sampler *       smpl = common_sampler_init(E.model, sp);
    const int64_t          s0   = ggml_time_us();
    common_sampler_sample(smpl, E.ctx, -1);
    const double sample_ms = (ggml_time_us() - s0) / 1000.0;
    common_sampler_free(smpl);
    llama_memory_clear(mem, true);
    E.cache.clear();
    json j;
    j["total_ms"]  = total;
    j["sample_ms"] = sample_ms;
    j["by_kind"]   = P.ms;
    return ret(j.dump());
}
