// Airlock inbox: passkeys. Registers one (a form with data-register) and
// approves with one (an approve form with data-passkey): the server gives
// the WebAuthn options, the browser's authenticator answers, and the
// answer goes back with the form. Without WebAuthn the form says so.
(function () {
  "use strict";

  function b64u(buf) {
    var s = "", bytes = new Uint8Array(buf);
    for (var i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function unb64u(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) s += "=";
    var bin = atob(s), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }
  function ids(list) {
    (list || []).forEach(function (c) { c.id = unb64u(c.id); });
  }
  function fail(form, msg) {
    var p = form.querySelector(".passkey-error");
    if (p) { p.textContent = msg; p.hidden = false; } else { alert(msg); }
    form.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
  }
  function post(url, body) {
    return fetch(url, { method: "POST", body: body, credentials: "same-origin" }).then(function (r) {
      return r.json().then(function (j) {
        if (!r.ok) throw new Error(j.error || ("the server answered " + r.status));
        return j;
      });
    });
  }

  function register(form) {
    var fields = new URLSearchParams(new FormData(form));
    return post(form.getAttribute("action"), fields).then(function (j) {
      var pk = j.options.publicKey;
      pk.challenge = unb64u(pk.challenge);
      pk.user.id = unb64u(pk.user.id);
      ids(pk.excludeCredentials);
      return navigator.credentials.create({ publicKey: pk });
    }).then(function (cred) {
      fields.set("response", JSON.stringify({
        id: cred.id, rawId: b64u(cred.rawId), type: cred.type,
        response: {
          attestationObject: b64u(cred.response.attestationObject),
          clientDataJSON: b64u(cred.response.clientDataJSON),
          transports: cred.response.getTransports ? cred.response.getTransports() : []
        },
        clientExtensionResults: cred.getClientExtensionResults()
      }));
      return post(form.dataset.register, fields);
    }).then(function (j) { window.location = j.next; });
  }

  function approve(form) {
    return post(form.dataset.passkey, new URLSearchParams(new FormData(form))).then(function (j) {
      var pk = j.options.publicKey;
      pk.challenge = unb64u(pk.challenge);
      ids(pk.allowCredentials);
      form.dataset.nonce = j.nonce;
      return navigator.credentials.get({ publicKey: pk });
    }).then(function (cred) {
      var r = cred.response;
      var a = {
        id: cred.id, rawId: b64u(cred.rawId), type: cred.type,
        response: {
          authenticatorData: b64u(r.authenticatorData), clientDataJSON: b64u(r.clientDataJSON),
          signature: b64u(r.signature), userHandle: r.userHandle ? b64u(r.userHandle) : null
        },
        clientExtensionResults: cred.getClientExtensionResults()
      };
      [["passkey_nonce", form.dataset.nonce], ["passkey_assertion", JSON.stringify(a)]].forEach(function (kv) {
        var input = form.querySelector("input[name=" + kv[0] + "]") || document.createElement("input");
        input.type = "hidden"; input.name = kv[0]; input.value = kv[1];
        form.appendChild(input);
      });
      form.dataset.signed = "1";
      form.submit();
    });
  }

  document.addEventListener("submit", function (e) {
    var form = e.target;
    var step = form.dataset.register ? register : form.dataset.passkey && !form.dataset.signed ? approve : null;
    if (!step) return;
    e.preventDefault();
    if (!window.PublicKeyCredential) {
      fail(form, "This browser cannot use passkeys (WebAuthn).");
      return;
    }
    form.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    step(form).catch(function (err) { fail(form, "Passkey: " + err.message); });
  });
})();
