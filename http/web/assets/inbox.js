// Airlock inbox: counts down each request's time left and up its time
// waiting, from the <time datetime> the server wrote.
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
})();
