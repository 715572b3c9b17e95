// Huey's dashboard in the admin (huey.contrib.djhuey.stats) refreshes its figures every five
// seconds. Huey's own template does this in an inline <script>, which Parley's
// Content-Security-Policy refuses; templates/admin/hueystats/dashboard.html loads this file instead.
// The fragment is the admin's own server-rendered (escaped) HTML.

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
