// The end of an MCP server sign-in: the authorization server sent the
// browser here with the code. Hand this URL to the Hearth tab that started
// the sign-in — over a BroadcastChannel, which only this origin's pages
// can hear, and to the opener (this origin only) when the browser kept the
// link to it — then close. Hearth checks the state and issuer itself.
(function () {
  "use strict";
  var message = { type: "hearth-oauth-callback", url: window.location.href };
  var sent = false;
  try {
    var channel = new BroadcastChannel("hearth-oauth");
    channel.postMessage(message);
    channel.close();
    sent = true;
  } catch (e) { /* older browsers: the opener below */ }
  try {
    if (window.opener && !window.opener.closed) {
      window.opener.postMessage(message, window.location.origin);
      sent = true;
    }
  } catch (e) { /* the opener is gone or of another origin */ }
  document.getElementById("status").textContent = sent
    ? "Signed in. You can close this window."
    : "Hearth could not be told about the sign-in. Close this window and try again from the Servers panel.";
  setTimeout(function () { window.close(); }, 400);
})();
