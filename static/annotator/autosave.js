// Autosave for the annotation form: htmx posts the draft (see the hx-* attributes on the form);
// this module adds what htmx cannot know: the saved / not saved state, time on the page, slider
// values, a save when the tab is hidden or closed, and a submit that waits for the last save.
const form = document.querySelector("form[data-autosave]");

if (form) {
  const status = () => document.getElementById("save-status");
  const seconds = form.querySelector("#seconds");
  let changes = 0; // edits made on this page
  let savedChanges = 0; // edits covered by the last successful save
  let sentChanges = 0; // edits covered by the request in flight
  let sentSeconds = 0; // seconds reported by the request in flight
  let inFlight = false;
  let lastInput = 0;
  let conflict = false;
  let retryTimer = null;

  const setStatus = (state, text) => {
    const element = status();
    if (!element || conflict) return;
    element.dataset.state = state;
    element.className = `save-status save-status--${state === "saving" ? "pending" : state}`;
    element.textContent = text;
  };
  const dirty = () => changes > savedChanges;

  // A slider has no "unanswered" state, so its value travels in a hidden input set on first touch.
  // Touching a slider where it already sits (its start, often the most common answer) fires no
  // event, so each unset slider also has a "Set to N" button that sets whatever value it shows.
  const setSlider = (range) => {
    const hidden = form.querySelector(`input[type=hidden][name="${range.dataset.sliderFor}"]`);
    hidden.value = range.value;
    const slider = range.closest("[data-slider]");
    slider.classList.remove("slider--unset");
    slider.parentElement.querySelector("[data-slider-output]").textContent = range.value;
    const button = form.querySelector(`[data-slider-set="${range.dataset.sliderFor}"]`);
    if (button) button.hidden = true;
  };
  // Capture phase: the hidden input is up to date before htmx reads the form for this event.
  form.addEventListener(
    "input",
    (event) => {
      const range = event.target.closest?.("[data-slider-for]");
      if (range) setSlider(range);
    },
    true,
  );
  form.addEventListener("click", (event) => {
    const button = event.target.closest?.("[data-slider-set]");
    if (!button) return;
    const range = form.querySelector(`[data-slider-for="${button.dataset.sliderSet}"]`);
    setSlider(range);
    range.focus();
    // A change event that bubbles to the form: it counts as an edit and triggers the autosave.
    range.dispatchEvent(new Event("change", { bubbles: true }));
  });

  const noteChange = () => {
    changes += 1;
    lastInput = Date.now();
    setStatus("pending", "Not saved yet…");
  };
  form.addEventListener("input", noteChange);
  form.addEventListener("change", noteChange);

  // Time on the page: counted only while the tab is visible, sent with each save.
  setInterval(() => {
    if (document.visibilityState === "visible") seconds.value = String(Number(seconds.value) + 1);
  }, 1000);

  form.addEventListener("htmx:beforeRequest", (event) => {
    if (conflict) {
      event.preventDefault();
      return;
    }
    inFlight = true;
    sentChanges = changes;
    sentSeconds = Number(seconds.value); // the form values were read just before this event
    setStatus("saving", "Saving…");
  });
  // A conflict (409) or a warning comes with a message to show: swap it in like a success.
  form.addEventListener("htmx:beforeSwap", (event) => {
    if (event.detail.xhr.status === 409) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
  form.addEventListener("htmx:afterRequest", (event) => {
    inFlight = false;
    const xhr = event.detail.xhr;
    if (event.detail.successful && xhr.status === 200) {
      savedChanges = sentChanges;
      seconds.value = String(Math.max(0, Number(seconds.value) - sentSeconds));
      if (dirty()) setStatus("pending", "Not saved yet…");
    } else if (xhr.status === 409) {
      conflict = true;
      form.dataset.conflict = "true";
    } else {
      // Offline or a server error: keep the edits and try again shortly.
      setStatus("error", "Not saved — the connection failed. Retrying… keep this tab open.");
      clearTimeout(retryTimer);
      retryTimer = setTimeout(() => window.htmx?.trigger(form, "parley:save"), 5000);
    }
  });
  window.addEventListener("online", () => dirty() && window.htmx?.trigger(form, "parley:save"));

  // Leaving the tab: save now (the page stays alive). Closing it: send what is unsaved as a beacon.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden" && dirty() && !inFlight) window.htmx?.trigger(form, "parley:save");
  });
  // The beacon also carries the seconds spent since the last save. If the page comes back from the
  // back-forward cache, its revision is behind the beacon's save: reload it.
  let beaconSent = false;
  window.addEventListener("pagehide", () => {
    if (conflict || form.dataset.submitting) return;
    if (dirty() || Number(seconds.value) >= 5) beaconSent = navigator.sendBeacon(form.dataset.draftUrl, new FormData(form));
  });
  window.addEventListener("pageshow", (event) => {
    if (event.persisted && beaconSent) window.location.reload();
  });

  // "Saved at" in the annotator's own time zone (the server writes it in its own).
  const localTime = () => {
    const time = status()?.querySelector("time[datetime]");
    if (time) time.textContent = new Date(time.dateTime).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  };
  localTime();
  form.addEventListener("htmx:afterSettle", localTime);

  // Submitting waits until the last autosave is back, so it carries the newest revision.
  form.addEventListener("submit", (event) => {
    if (form.dataset.submitting) return;
    event.preventDefault();
    form.dataset.submitting = "true";
    setStatus("saving", "Submitting…");
    const go = () => {
      if (inFlight || Date.now() - lastInput < 900) {
        setTimeout(go, 100);
        return;
      }
      form.submit();
    };
    go();
  });
}
