// Huey's dashboard in the admin (huey.contrib.djhuey.stats), within Parley's Content-Security-Policy.
// Huey's own template refreshes the figures in an inline script and asks before flushing in inline
// event handlers, both of which the policy refuses; Parley's copies of its templates
// (templates/admin/hueystats/) load this file instead, and mark the forms that must ask first with
// data-confirm. The fragment is the admin's own server-rendered (escaped) HTML.

// Ask before a danger-zone action; one listener for the forms the refresh swaps in too.
document.addEventListener("submit", (event) => {
  const question = event.target.dataset.confirm;
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});

const box = document.getElementById("hs-content");
if (box) {
  const url = box.getAttribute("data-url");
  let last = "";
  const refresh = () => {
    fetch(url, { headers: { "X-Requested-With": "fetch" } })
      .then((response) => (response.ok ? response.text() : Promise.reject(response.status)))
      .then((html) => {
        if (html !== last) {
          last = html;
          box.innerHTML = html;
        }
      })
      .catch(() => {});
  };
  setInterval(refresh, 5000);
}
