// Airlock inbox: counts down each request's time left and up its time
// waiting, from the <time datetime> the server wrote; shows times in the
// reader's zone; says when live updates stop, and why; and the keyboard
// shortcuts of a reviewer clearing a queue (press ? for the list).
(function () {
  "use strict";
  var SOON = 5 * 60 * 1000; // a deadline this close is marked

  function fmt(ms) {
    var s = Math.max(0, Math.floor(ms / 1000));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    return (h ? h + "h" : "") + (h || m ? m + "m" : "") + r + "s";
  }
  function tick() {
    var now = Date.now();
    document.querySelectorAll("time[data-countdown]").forEach(function (el) {
      var left = Date.parse(el.getAttribute("datetime")) - now;
      if (isNaN(left)) return;
      if (left > 0) {
        el.textContent = fmt(left) + " left";
        el.classList.toggle("soon", left <= SOON);
      } else {
        el.textContent = "expired";
        el.classList.remove("soon");
        el.classList.add("over");
      }
    });
    document.querySelectorAll("time[data-since]").forEach(function (el) {
      var since = now - Date.parse(el.getAttribute("datetime"));
      if (!isNaN(since)) el.textContent = fmt(since);
    });
  }
  // Times the server wrote in UTC read in the reader's zone; the UTC time
  // stays in the tooltip.
  var local = typeof Intl === "object" ? new Intl.DateTimeFormat(undefined, {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit"
  }) : null;
  function localTimes(root) {
    if (!local) return;
    root.querySelectorAll("time[datetime]:not([data-countdown]):not([data-since]):not([data-local])").forEach(function (el) {
      var t = Date.parse(el.getAttribute("datetime"));
      if (isNaN(t)) return;
      el.title = el.getAttribute("datetime");
      el.textContent = local.format(new Date(t));
      el.setAttribute("data-local", "");
    });
  }
  tick();
  localTimes(document);
  setInterval(tick, 1000);

  // The live regions' status, one short line for screen readers. Changes
  // that come in a burst are told once, after it.
  var noteTimer = null, pending = { added: 0, removed: 0, changed: null };
  function note(text) {
    var el = document.getElementById("live-note");
    if (el) el.textContent = text;
  }
  function rows() { return Array.prototype.slice.call(document.querySelectorAll("#list a.row-link")); }
  function hrefs() { return rows().map(function (a) { return a.getAttribute("href"); }); }
  function tellList() {
    noteTimer = null;
    var parts = [];
    if (pending.added) parts.push(pending.added + (pending.added > 1 ? " new requests" : " new request"));
    if (pending.removed) parts.push(pending.removed + " left the list");
    pending.added = pending.removed = 0;
    if (parts.length) note(parts.join(", ") + "; " + rows().length + " shown.");
  }

  // Live updates. When the stream fails, ask why: a session that ended
  // (signed out, idle, a restart) stops it for good and says so; a server
  // that does not answer is retried, and the page says updates wait.
  function banner(html) {
    var el = document.getElementById("conn");
    if (!el) return;
    if (html) {
      el.innerHTML = html;
      el.hidden = false;
    } else {
      el.hidden = true;
      el.textContent = "";
    }
  }
  // Whether the session lives: 401 once it ended.
  function askSession() {
    return fetch("/inbox/session", { headers: { "HX-Request": "true" }, cache: "no-store", credentials: "same-origin" });
  }
  // No more retries: the stream cannot come back without a sign-in.
  function signedOut(source) {
    if (source && source.removeAttribute) source.removeAttribute("sse-connect");
    banner('You are signed out: this page no longer updates. <a href="/inbox/signin">Sign in again</a>.');
  }
  document.addEventListener("htmx:sseError", function (e) {
    var source = e.target;
    askSession().then(function (r) {
        if (r.status === 401) {
          signedOut(source);
        } else {
          banner("Live updates are paused: the server does not answer. Retrying…");
        }
      }, function () {
        banner("Live updates are paused: the server does not answer. Retrying…");
      });
  });
  document.addEventListener("htmx:sseOpen", function () { banner(""); });
  // The server closed the stream for good, and the extension does not
  // retry: the session ended (signed out, on this server or another, idle,
  // its token revoked) or it holds too many live pages. Ask which.
  document.addEventListener("htmx:sseClose", function (e) {
    if (!e.detail || e.detail.type !== "message") return;
    var source = e.target;
    askSession().then(function (r) {
      if (r.status === 401) {
        signedOut(source);
      } else {
        banner("This page no longer updates: this session has too many pages open. Close some, then reload this one.");
      }
    }, function () {
      banner("This page no longer updates: the server does not answer. Reload it in a moment.");
    });
  });

  // Keyboard shortcuts. None fires while typing in a field, and none
  // approves or rejects by itself: "a" only moves the focus to the Approve
  // button, which Enter then presses.
  function move(step) {
    var all = rows();
    if (!all.length) return;
    var i = all.indexOf(document.activeElement);
    i = i < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, i + step));
    all[i].focus();
    all[i].scrollIntoView({ block: "nearest" });
  }
  function focus(selector) {
    var el = document.querySelector(selector);
    if (!el) return false;
    var box = el.closest("details");
    if (box) box.open = true;
    el.focus();
    el.scrollIntoView({ block: "center" });
    return true;
  }
  function typing(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }
  // A reason, or an edit, being written is not thrown away by a key (the
  // editor starts with the arguments: only a change is writing).
  function writing() {
    return Array.prototype.some.call(document.querySelectorAll("textarea"), function (t) {
      return t.value.trim() !== "" && t.value !== t.defaultValue;
    });
  }
  var keys = {
    "j": function () { move(1); },
    "k": function () { move(-1); },
    "/": function () { return focus('form[role="search"] input[type="search"], form[role="search"] input'); },
    "n": function () { location.assign("/inbox/next"); },
    "a": function () { return focus('form[action$="/approve"] button[type=submit]'); },
    "r": function () { return focus("#reject-reason"); },
    "b": function () { return focus('form.batch button[type=submit]'); },
    "i": function () { location.assign("/inbox"); },
    "h": function () { location.assign("/inbox/history"); },
    "l": function () { location.assign("/inbox/audit"); },
    "?": function () {
      var d = document.getElementById("shortcuts");
      if (d && !d.open) d.showModal();
    },
    "Escape": function () {
      if (location.pathname.indexOf("/inbox/approvals/") !== 0) return false;
      if (writing()) {
        note("A reason is written on this page: Escape does not leave it.");
        return false;
      }
      location.assign("/inbox");
    }
  };
  // A reviewer who does not want single-key shortcuts (a speech input or
  // a screen reader's own keys) turns them off; the choice stays in this
  // browser.
  var store = "airlock.shortcuts";
  function enabled() {
    try { return localStorage.getItem(store) !== "off"; } catch (err) { return true; }
  }
  var toggle = document.getElementById("shortcuts-on");
  if (toggle) {
    toggle.checked = enabled();
    toggle.addEventListener("change", function () {
      try { localStorage.setItem(store, toggle.checked ? "on" : "off"); } catch (err) { /* private mode: this page only */ }
    });
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
    // An open dialog keeps its keys (Esc closes it).
    if (document.querySelector("dialog[open]")) return;
    if (!enabled() || (toggle && !toggle.checked)) return;
    if (typing(e.target)) {
      if (e.key === "Escape") e.target.blur();
      return;
    }
    var fn = keys[e.key];
    if (fn && fn() !== false) e.preventDefault();
  });
  document.addEventListener("click", function (e) {
    var t = e.target;
    if (t && t.id === "show-shortcuts") keys["?"]();
  });

  // On a small screen the filters start folded, unless one is set.
  var filters = document.getElementById("filters");
  if (filters && !filters.hasAttribute("data-active") && window.matchMedia && window.matchMedia("(max-width: 40rem)").matches) {
    filters.open = false;
  }

  // A live refresh of the list keeps the focused row focused; one of the
  // decision region says so only when the request itself changed, and
  // gives the focus back only when it was lost.
  var focused = null, before = null, heading = null, inside = false;
  function decideHeading() {
    var h = document.querySelector("#decide h2");
    return h ? h.textContent : "";
  }
  document.addEventListener("htmx:beforeSwap", function (e) {
    var a = document.activeElement;
    if (e.target.id === "list") {
      focused = a && a.classList.contains("row-link") ? a.getAttribute("href") : null;
      before = hrefs();
    }
    if (e.target.id === "decide") {
      heading = decideHeading();
      inside = !!(a && e.target.contains(a));
    }
  });
  document.addEventListener("htmx:afterSwap", function (e) {
    tick();
    localTimes(document);
    var t = e.target;
    if (t.id === "decide") {
      var h = t.querySelector("h2");
      if (h && h.textContent !== heading) note("This request changed: " + h.textContent);
      if (h && inside && !t.contains(document.activeElement)) h.focus();
      return;
    }
    if (t.id !== "list") return;
    var now = hrefs(), was = before || [];
    pending.added += now.filter(function (x) { return was.indexOf(x) < 0; }).length;
    pending.removed += was.filter(function (x) { return now.indexOf(x) < 0; }).length;
    if (noteTimer) clearTimeout(noteTimer);
    noteTimer = setTimeout(tellList, 1500);
    if (!focused) return;
    var again = t.querySelector('a.row-link[href="' + focused + '"]');
    if (again) again.focus();
  });
})();
