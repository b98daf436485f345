// The playground at /: a chat against this server's /v1/chat/completions, streamed over SSE. No build step, no
// dependencies; the API key (when the server asks for one) is kept in localStorage.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { model: null, history: [], controller: null, keyRequired: false };

function apiHeaders() {
  const headers = { "Content-Type": "application/json" };
  const key = $("api-key").value.trim();
  if (key) headers.Authorization = "Bearer " + key;
  return headers;
}

function setStatus(text) {
  $("status").textContent = text;
}

async function loadModel() {
  const info = $("model-info");
  try {
    const response = await fetch("/v1/models", { headers: apiHeaders() });
    if (response.status === 401) {
      state.keyRequired = true;
      $("api-key-row").hidden = false;
      info.innerHTML = '<span class="dot down"></span>enter the API key to connect';
      return;
    }
    const body = await response.json();
    if (!response.ok) {
      info.innerHTML = '<span class="dot"></span>' + escapeHtml(body.error ? body.error.message : response.statusText);
      setTimeout(loadModel, 2000);
      return;
    }
    state.model = body.data[0].id;
    const health = await fetch("/q/health/ready").then((r) => r.json()).catch(() => null);
    const check = health && health.checks ? health.checks.find((c) => c.name === "model") : null;
    const data = (check && check.data) || {};
    const details = [data.phase, data.load_ms !== undefined ? "loaded in " + data.load_ms + " ms" : null,
      data.weights ? "weights " + data.weights : null].filter(Boolean).join(" · ");
    info.innerHTML = '<span class="dot ' + (data.phase === "ready" ? "ready" : "") + '"></span><b id="model-id">'
      + escapeHtml(state.model) + "</b>" + (details ? " — " + escapeHtml(details) : "");
  } catch (e) {
    info.innerHTML = '<span class="dot down"></span>cannot reach the server';
    setTimeout(loadModel, 3000);
  }
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

function addMessage(role, text) {
  $("empty").hidden = true;
  const div = document.createElement("div");
  div.className = "message " + role;
  div.innerHTML = '<span class="role">' + role + '</span><span class="text"></span><span class="note"></span>';
  div.querySelector(".text").textContent = text;
  $("messages").appendChild(div);
  $("messages").scrollTop = $("messages").scrollHeight;
  return div;
}

function requestBody() {
  const messages = [];
  const system = $("system").value.trim();
  if (system) messages.push({ role: "system", content: system });
  messages.push(...state.history);
  const body = {
    model: state.model, messages, stream: true, stream_options: { include_usage: true },
    temperature: Number($("temperature").value), top_p: Number($("top-p").value),
  };
  const maxTokens = parseInt($("max-tokens").value, 10);
  if (maxTokens > 0) body.max_tokens = maxTokens;
  const stops = $("stop").value.split("\n").filter((s) => s.length > 0).slice(0, 4);
  if (stops.length) body.stop = stops;
  return body;
}

function showStats(promptTokens, completionTokens, firstTokenMs, rate) {
  $("stat-prompt").textContent = promptTokens ?? "–";
  $("stat-completion").textContent = completionTokens ?? "–";
  $("stat-ttft").textContent = firstTokenMs != null ? Math.round(firstTokenMs) + " ms" : "–";
  $("stat-rate").textContent = rate != null && isFinite(rate) ? rate.toFixed(1) : "–";
}

function setBusy(busy) {
  $("send").disabled = busy;
  $("stop-button").disabled = !busy;
}

async function send(text) {
  if (!state.model) {
    await loadModel();
    if (!state.model) return;
  }
  state.history.push({ role: "user", content: text });
  addMessage("user", text);
  const reply = addMessage("assistant", "");
  reply.classList.add("streaming");
  const textNode = reply.querySelector(".text");
  const note = reply.querySelector(".note");
  const controller = new AbortController();
  state.controller = controller;
  setBusy(true);
  setStatus("waiting for the first token…");
  const started = performance.now();
  let firstAt = null, pieces = 0, usage = null, finish = null, content = "";
  showStats(null, null, null, null);
  try {
    const response = await fetch("/v1/chat/completions", {
      method: "POST", headers: apiHeaders(), body: JSON.stringify(requestBody()), signal: controller.signal,
    });
    if (!response.ok) {
      const error = await response.json().catch(() => ({}));
      if (response.status === 401) { $("api-key-row").hidden = false; }
      throw new Error(error.error ? error.error.message : response.status + " " + response.statusText);
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        for (const line of event.split("\n")) {
          if (!line.startsWith("data: ")) continue; // ": keep-alive" comments
          const data = line.slice(6);
          if (data === "[DONE]") continue;
          const chunk = JSON.parse(data);
          if (chunk.error) throw new Error(chunk.error.message);
          if (chunk.usage) usage = chunk.usage;
          for (const choice of chunk.choices || []) {
            const piece = choice.delta && choice.delta.content;
            if (piece) {
              if (firstAt === null) firstAt = performance.now();
              pieces++;
              content += piece;
              textNode.textContent = content;
              $("messages").scrollTop = $("messages").scrollHeight;
              // a rate over less than a fifth of a second says more about the network than about the model
              const seconds = (performance.now() - firstAt) / 1000;
              showStats(null, pieces, firstAt - started, seconds >= 0.2 ? (pieces - 1) / seconds : null);
              setStatus("streaming…");
            }
            if (choice.finish_reason) finish = choice.finish_reason;
          }
        }
      }
    }
    const seconds = firstAt ? (performance.now() - firstAt) / 1000 : 0;
    const tokens = usage ? usage.completion_tokens : pieces;
    showStats(usage ? usage.prompt_tokens : null, tokens, firstAt ? firstAt - started : null,
      seconds >= 0.2 ? Math.max(0, tokens - 1) / seconds : null);
    note.textContent = "finish: " + (finish || "unknown");
    setStatus("done");
  } catch (e) {
    if (e.name === "AbortError") {
      note.textContent = "stopped";
      setStatus("stopped: the request was cancelled");
    } else {
      reply.classList.add("error");
      note.textContent = "error: " + e.message;
      setStatus("error");
    }
  } finally {
    reply.classList.remove("streaming");
    reply.dataset.done = "true";
    state.history.push({ role: "assistant", content });
    state.controller = null;
    setBusy(false);
  }
}

$("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("input").value.trim();
  if (!text || state.controller) return;
  $("input").value = "";
  send(text);
});
$("input").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    $("composer").requestSubmit();
  }
});
$("stop-button").addEventListener("click", () => {
  if (state.controller) state.controller.abort();
});
$("reset").addEventListener("click", () => {
  if (state.controller) state.controller.abort();
  state.history = [];
  $("messages").querySelectorAll(".message").forEach((m) => m.remove());
  $("empty").hidden = false;
  showStats(null, null, null, null);
  setStatus("");
});
for (const [input, output] of [["temperature", "temperature-value"], ["top-p", "top-p-value"]]) {
  $(input).addEventListener("input", () => { $(output).textContent = $(input).value; });
}
$("api-key").value = localStorage.getItem("zse-api-key") || "";
$("api-key").addEventListener("change", () => {
  localStorage.setItem("zse-api-key", $("api-key").value.trim());
  loadModel();
});
loadModel();
