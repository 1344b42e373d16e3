// Airlock inbox: counts down each request's time left and up its time
// waiting, from the <time datetime> the server wrote; and the keyboard
// shortcuts of a reviewer clearing a queue (press ? for the list).
(function () {
  "use strict";
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
      } else {
        el.textContent = "expired";
        el.classList.add("over");
      }
    });
    document.querySelectorAll("time[data-since]").forEach(function (el) {
      var since = now - Date.parse(el.getAttribute("datetime"));
      if (!isNaN(since)) el.textContent = fmt(since);
    });
  }
  tick();
  setInterval(tick, 1000);

  // Keyboard shortcuts. None fires while typing in a field, and none
  // approves or rejects by itself: "a" only moves the focus to the Approve
  // button, which Enter then presses.
  function rows() { return Array.prototype.slice.call(document.querySelectorAll("#list a.row-link")); }
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
    el.focus();
    el.scrollIntoView({ block: "center" });
    return true;
  }
  function typing(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }
  var keys = {
    "j": function () { move(1); },
    "k": function () { move(-1); },
    "/": function () { return focus("#f-search"); },
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
      if (location.pathname.indexOf("/inbox/approvals/") === 0) location.assign("/inbox");
      else return false;
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

  // A live refresh of the list keeps the focused row focused.
  var focused = null;
  document.addEventListener("htmx:beforeSwap", function (e) {
    var a = document.activeElement;
    focused = e.target.id === "list" && a && a.classList.contains("row-link") ? a.getAttribute("href") : null;
  });
  // The regions that update themselves are not live regions (their
  // countdowns change every second); one short note says what changed.
  function note(text) {
    var el = document.getElementById("live-note");
    if (el) el.textContent = text;
  }
  document.addEventListener("htmx:afterSwap", function (e) {
    tick();
    if (e.target.id === "decide") {
      var h = e.target.querySelector("h2");
      note("This request changed: " + (h ? h.textContent : "reload it."));
      return;
    }
    if (e.target.id !== "list") return;
    note("The list was updated: " + rows().length + " requests shown.");
    if (!focused) return;
    var again = e.target.querySelector('a.row-link[href="' + focused + '"]');
    if (again) again.focus();
  });
})();
