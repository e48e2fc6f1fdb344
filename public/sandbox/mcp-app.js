// The sandbox proxy of an MCP App (io.modelcontextprotocol/ui): it tells
// Hearth it is ready, receives the app's HTML once, renders it in an inner
// frame (sandboxed, opaque origin, the app's policy first in its document)
// and relays JSON-RPC messages between that frame and Hearth, nothing else.
// Messages named ui/notifications/sandbox-* are between Hearth and this
// page only and are never passed on.
(function () {
  "use strict";
  var host = window.parent;
  var inner = null;

  function reserved(data) {
    return !!data && typeof data.method === "string" &&
      data.method.indexOf("ui/notifications/sandbox-") === 0;
  }

  window.addEventListener("message", function (event) {
    var data = event.data;
    if (event.source === host) {
      if (data && data.method === "ui/notifications/sandbox-resource-ready") {
        if (inner) return;
        var params = data.params || {};
        inner = document.createElement("iframe");
        inner.setAttribute("sandbox", "allow-scripts");
        inner.setAttribute("referrerpolicy", "no-referrer");
        inner.setAttribute("title", "MCP App");
        if (typeof params.cspPolicy === "string") inner.setAttribute("csp", params.cspPolicy);
        inner.srcdoc = typeof params.html === "string" ? params.html : "";
        document.body.appendChild(inner);
        return;
      }
      if (reserved(data) || !inner || !inner.contentWindow) return;
      inner.contentWindow.postMessage(data, "*");
    } else if (inner && event.source === inner.contentWindow) {
      if (reserved(data)) return;
      host.postMessage(data, "*");
    }
  });

  host.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, "*");
})();
