// The item page: reading checks, failures, timer, idle-aware active time, heartbeat and autosave.
// The server enforces every rule; this script only makes the page pleasant and keeps work safe.
// The form is boosted (htmx): a submit is answered with the next item's page, swapped into the
// body in one request; the page's listeners and timers are then set up again for the new item
// (start / stop below). Without this script the form posts and the server redirects.
(function () {
  "use strict";
  var stop = null;  // the current item's teardown

  function start(moved) {
  var form = document.getElementById("item-form");
  if (!form) return null;
  var listening = new AbortController(), signal = listening.signal, timers = [];
  function on(target, type, fn, options) {
    target.addEventListener(type, fn, Object.assign({ signal: signal }, options || {}));
  }
  var $ = function (sel, root) { return (root || document).querySelector(sel); };
  var $$ = function (sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); };
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

  var beatEvery = +form.dataset.heartbeat * 1000;
  var idleLimit = +form.dataset.idle * 1000, nSteps = +form.dataset.nSteps;
  // The server's numbers: seconds spent (rounded down) and seconds left before submission opens
  // (annotation.rules.seconds_left: whole seconds rounded up, 0 only once it is open).
  var startedAt = Date.now() - (+form.dataset.elapsed) * 1000;
  var opensAt = Date.now() + (+form.dataset.secondsLeft) * 1000;
  var submitBtn = $("#submit-btn"), dirtyEl = $("#dirty"), saveStatus = $("#save-status");
  var dirty = !dirtyEl.hidden, submitting = false;

  // --- changes and autosave (htmx posts the whole form to the draft URL) ---------------------
  // What was typed stays in this browser (localStorage) until the server accepts a draft of it:
  // a refusal (4xx) is shown at its field with the server's reason, never as "offline", and the
  // text is restored when the page is opened again.
  var autosave = document.getElementById("autosave");
  var storePrefix = "h2r-draft:" + location.pathname + ":";
  var storeKey = storePrefix + (autosave ? autosave.getAttribute("hx-post") : form.action);
  var version = 0, sentVersion = -1;
  function snapshot() {
    var out = [];
    new FormData(form).forEach(function (v, k) {
      if (k !== "csrfmiddlewaretoken" && k !== "active_ms" && typeof v === "string") out.push([k, v]);
    });
    return out;
  }
  function keepLocally(submitted) {
    var kept = { at: Date.now(), fields: snapshot(), submitted: !!submitted };
    try { localStorage.setItem(storeKey, JSON.stringify(kept)); } catch (err) { /* storage full or off */ }
  }
  function forgetLocally() { try { localStorage.removeItem(storeKey); } catch (err) { /* off */ } }
  function changed() {
    dirty = true;
    dirtyEl.hidden = false;
    version += 1;
    keepLocally();
    if (window.htmx) window.htmx.trigger("#autosave", "autosave");
  }
  function fieldFor(key) {
    var m = /^failure-(\d+)$/.exec(key);
    if (m) { var fs = list ? $$(".failure", list)[+m[1] - 1] : null; return fs ? $("textarea", fs) : null; }
    return form.elements[key] && form.elements[key].nodeName ? form.elements[key] : null;
  }
  function clearFieldErrors() {
    $$(".autosave-error", form).forEach(function (p) {
      var el = document.getElementById(p.dataset.for);
      if (el) { el.removeAttribute("aria-invalid"); el.removeAttribute("aria-describedby"); }
      p.remove();
    });
  }
  function showFieldError(key, message) {
    var el = fieldFor(key);
    if (!el) return false;
    if (!el.id) el.id = "field-" + key;
    var p = document.createElement("p");
    p.className = "error field-error autosave-error";
    p.id = el.id + "-error";
    p.dataset.for = el.id;
    p.textContent = message;
    el.insertAdjacentElement("afterend", p);
    el.setAttribute("aria-invalid", "true");
    el.setAttribute("aria-describedby", p.id);
    return true;
  }
  on(document.body, "htmx:beforeRequest", function (e) {
    if (e.detail.elt.id === "autosave") sentVersion = version;
  });
  on(document.body, "htmx:afterRequest", function (e) {
    if (e.detail.elt === form && !e.detail.successful && !(e.detail.xhr && e.detail.xhr.status)) {
      unsent();  // the submit never reached the server: the answers stay, try again
      return;
    }
    if (e.detail.elt.id !== "autosave") return;
    var xhr = e.detail.xhr;
    if (e.detail.successful) {
      clearFieldErrors();
      saveStatus.classList.remove("is-refused");
      if (version === sentVersion) forgetLocally();  // later changes are on their way
      return;
    }
    if (!xhr || !xhr.status) {  // no answer at all: the connection, not the server
      saveStatus.textContent = "Offline — your changes are kept in this browser and saved when the connection is back";
      timers.push(setTimeout(function () { window.htmx.trigger("#autosave", "autosave"); }, 5000));
      return;
    }
    // the server answered and refused: say why, at the field; the text stays here
    var body;
    try { body = JSON.parse(xhr.responseText); } catch (err) { body = null; }
    clearFieldErrors();
    var fields = (body && body.fields) || {};
    Object.keys(fields).forEach(function (key) { showFieldError(key, fields[key]); });
    var reason = body && body.message ? body.message : "Not saved: the server refused it (HTTP " + xhr.status + ").";
    saveStatus.textContent = reason + " What you typed is kept in this browser until it can be saved.";
    saveStatus.classList.add("is-refused");
  });

  // --- reading: goal acknowledgement, every L2 step (and every L1 step when the study asks) -------------------------------------------
  function updateReading() {
    if (!$("#read-bar")) return;  // a form type without the step click-through
    var read = $$(".step-check:checked").length;
    var pct = nSteps ? Math.round(100 * read / nSteps) : 100;
    $("#read-bar").style.width = pct + "%";
    $("#read-count").innerHTML = "<strong>" + read + "/" + nSteps + "</strong> steps (" + pct + "%)";
    $$(".step-check").forEach(function (box) { box.closest(".step").classList.toggle("is-read", box.checked); });
  }

  // --- decision and failures -----------------------------------------------------------------
  var failures = $("#failures"), list = $("#failure-list");
  function renumber() {
    $$(".failure", list).forEach(function (fs, k) {
      $(".failure-n", fs).textContent = k + 1;
      $(".failure-remove", fs).setAttribute("aria-label", "Remove failure " + (k + 1));
    });
  }
  function addFailure(focus, index) {
    var next = 0;
    $$(".failure", list).forEach(function (fs) { next = Math.max(next, +fs.dataset.index + 1); });
    if (index !== undefined) next = index;
    var html = $("#failure-template").innerHTML.replace(/__i__/g, next).replace(/__n__/g, next + 1);
    list.insertAdjacentHTML("beforeend", html);
    renumber();
    if (focus) list.lastElementChild.querySelector("textarea").focus();
  }
  function updateChoice() {
    var choice = $('input[name="choice"]:checked');
    var failing = choice && choice.value === "failure";
    if (failures) failures.hidden = !failing;
    $$(".choice").forEach(function (c) { c.classList.toggle("is-selected", c.querySelector("input").checked); });
    if (failing && list && !$(".failure", list)) addFailure(false);
  }
  if (list) $("#add-failure").addEventListener("click", function () { addFailure(true); changed(); });
  if (list) list.addEventListener("click", function (e) {
    var btn = e.target.closest(".failure-remove");
    if (!btn) return;
    btn.closest(".failure").remove();
    renumber();
    changed();
  });

  form.addEventListener("change", function (e) {
    if (e.target.classList.contains("step-check")) updateReading();
    if (e.target.name === "choice" || e.target.closest(".choice")) updateChoice();
    changed();
  });
  form.addEventListener("input", function (e) { if (e.target.tagName === "TEXTAREA") changed(); });

  // --- codebook dialog -----------------------------------------------------------------------
  var dialog = $("#codebook-dialog");
  $$("[data-open-codebook]").forEach(function (b) { b.addEventListener("click", function () {
    dialog.showModal();
    if (window.htmx) window.htmx.trigger("#codebook-body", "codebook-open");  // loaded once, on first open
  }); });
  $$("[data-close-codebook]").forEach(function (b) { b.addEventListener("click", function () { dialog.close(); }); });

  // --- timer: a display countdown from the server's seconds left, then time elapsed -------------
  function fmt(s) { s = Math.max(0, Math.floor(s)); return Math.floor(s / 60) + ":" + ("0" + (s % 60)).slice(-2); }
  function tick() {
    var now = Date.now(), elapsed = (now - startedAt) / 1000, left = (opensAt - now) / 1000;
    var open = left <= 0;  // shown rounded up, as the server rounds: never 0:00 while closed
    $("#timer-text").textContent = open ? "Time elapsed: " + fmt(elapsed) : fmt(Math.ceil(left)) + " until submission becomes open";
    // screen readers hear the countdown once, when submission opens (not every second)
    if (open && submitBtn.disabled) $("#timer-status").textContent = "Submission is open.";
    submitBtn.disabled = !open;
    submitBtn.classList.toggle("is-waiting", !open);
  }

  // --- active time: visible tab and some input within the idle timeout -------------------------
  var lastInput = Date.now(), lastTick = Date.now(), pendingActive = 0;
  ["pointerdown", "pointermove", "keydown", "scroll", "wheel", "input", "focus"].forEach(function (ev) {
    on(window, ev, function () { lastInput = Date.now(); }, { passive: true, capture: true });
  });
  function accrue() {
    var now = Date.now();
    if (document.visibilityState === "visible" && now - lastInput < idleLimit) pendingActive += now - lastTick;
    lastTick = now;
  }
  function beat(useBeacon) {
    accrue();
    var data = new FormData();
    data.append("active_ms", String(pendingActive));
    data.append("csrfmiddlewaretoken", csrf);
    var sent = pendingActive;
    pendingActive = 0;
    if (useBeacon && navigator.sendBeacon) { navigator.sendBeacon(form.dataset.beatUrl, data); return; }
    fetch(form.dataset.beatUrl, { method: "POST", body: data, headers: { "X-CSRFToken": csrf }, credentials: "same-origin" })
      .catch(function () { pendingActive += sent; });  // offline: keep the time for the next beat
  }
  timers.push(setInterval(function () { accrue(); tick(); }, 1000));
  timers.push(setInterval(function () { beat(false); }, beatEvery));
  on(document, "visibilitychange", function () { accrue(); if (document.visibilityState === "hidden") beat(true); });

  // --- submit ---------------------------------------------------------------------------------
  // (on the document, capturing: before htmx reads the form for the boosted request)
  var submitLabel = submitBtn.textContent, sentActive = 0;
  on(document, "submit", function (e) {
    if (e.target !== form) return;
    keepLocally(true);  // kept until the server has it (a submit that never arrives is restored)
    accrue();
    sentActive = pendingActive;
    $("#active-ms").value = String(pendingActive);
    pendingActive = 0;
    submitting = true;
    submitBtn.disabled = true;
    submitBtn.textContent = "Submitting…";
  }, { capture: true });
  function unsent() {  // the connection dropped: nothing was stored, the page stays as it was
    pendingActive += sentActive;
    submitting = false;
    submitBtn.textContent = submitLabel;
    tick();  // the button as the clock allows
    saveStatus.textContent = "Not submitted: the server could not be reached. Your answers are kept in this browser; submit again when the connection is back.";
    saveStatus.classList.add("is-refused");
  }
  on(window, "beforeunload", function (e) {
    if (dirty && !submitting) { e.preventDefault(); e.returnValue = ""; }
  });

  // --- keyboard -------------------------------------------------------------------------------
  on(document, "keydown", function (e) {
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
      if (!submitBtn.disabled) form.requestSubmit(submitBtn);
      return;
    }
    var t = e.target.tagName;
    if (t === "TEXTAREA" || t === "INPUT" && e.target.type === "text" || e.altKey || e.ctrlKey || e.metaKey) return;
    var pick = { n: "none", f: "failure" }[e.key.toLowerCase()];
    if (!pick || (dialog && dialog.open)) return;
    var radio = $('input[name="choice"][value="' + pick + '"]');
    if (!radio) return;  // a form type without the failure choice
    radio.checked = true;
    radio.focus();
    radio.dispatchEvent(new Event("change", { bubbles: true }));
  });

  // --- what this browser kept and the server has not accepted yet: back into the form --------
  function restore() {
    var saved = null;
    try {
      Object.keys(localStorage).forEach(function (k) {  // another item of this study: submitted since
        if (k.indexOf(storePrefix) === 0 && k !== storeKey) localStorage.removeItem(k);
      });
      saved = JSON.parse(localStorage.getItem(storeKey) || "null");
    } catch (err) { saved = null; }
    if (!saved || !saved.fields) return;
    if (saved.submitted && document.getElementById("submit-errors")) {
      forgetLocally();  // the server has the submit and shows it back (refused): it is newer
      return;
    }
    var byName = {};
    saved.fields.forEach(function (kv) { (byName[kv[0]] = byName[kv[0]] || []).push(kv[1]); });
    if (list) {
      $$(".failure", list).forEach(function (fs) { if (!(("f-" + fs.dataset.index + "-desc") in byName)) fs.remove(); });
      Object.keys(byName).map(function (k) { return /^f-(\d+)-desc$/.exec(k); }).filter(Boolean)
        .map(function (m) { return +m[1]; }).sort(function (a, b) { return a - b; })
        .forEach(function (i) { if (!form.elements["f-" + i + "-desc"]) addFailure(false, i); });
    }
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name || el.name === "csrfmiddlewaretoken" || el.name === "active_ms") return;
      var values = byName[el.name] || [];
      if (el.type === "checkbox" || el.type === "radio") el.checked = values.indexOf(el.value) >= 0;
      else if (el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.type === "text" || el.type === "number") {
        if (values.length) el.value = values[0];
      }
    });
    saveStatus.textContent = "Restored what you typed in this browser that was not saved yet";
    dirty = true;
    dirtyEl.hidden = false;
    version += 1;
    var send = function () { if (window.htmx) window.htmx.trigger("#autosave", "autosave"); };
    if (document.readyState === "complete") send();  // a swapped-in item: htmx has set it up
    else on(window, "load", send);  // once htmx has set up the autosave
  }
  restore();
  // a refused submit: each refusal of typed text at its field, as the autosave shows them
  var refused = document.getElementById("field-errors");
  if (refused) {
    var byField = JSON.parse(refused.textContent || "{}");
    Object.keys(byField).forEach(function (key) { showFieldError(key, byField[key]); });
  }

  updateReading();
  updateChoice();
  tick();
  var errs = $("#submit-errors");
  if (errs) errs.scrollIntoView({ block: "center" });
  else if (moved) {  // the next item swapped in: start reading it from the top, as a new page
    window.scrollTo(0, 0);
    document.getElementById("main").focus({ preventScroll: true });
  }
  return function () {
    listening.abort();
    timers.forEach(function (t) { clearInterval(t); clearTimeout(t); });
  };
  }

  stop = start(false);
  // the boosted submit's answer: a page for the body (the next item, or this one refused);
  // one the server refused with an error status is shown too (a closed study, a lost session)
  document.addEventListener("htmx:beforeSwap", function (e) {
    if (e.detail.target !== document.body) return;
    if (e.detail.xhr.status >= 400) { e.detail.shouldSwap = true; e.detail.isError = false; }
    if (e.detail.shouldSwap && stop) { stop(); stop = null; }
  });
  document.addEventListener("htmx:afterSettle", function (e) {
    if (e.target === document.body) { if (stop) stop(); stop = start(true); }
  });
})();
