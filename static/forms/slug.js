// Fill a form's slug from its title as the title is typed, until the slug is edited by hand.
// Used by the annotation and chat study forms; the server still validates the slug.

const title = document.querySelector("#id_title");
const slug = document.querySelector("#id_slug");

export function slugify(text) {
  return text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, Number(slug?.maxLength) > 0 ? slug.maxLength : 60)
    .replace(/-+$/, "");
}

if (title && slug && !slug.readOnly) {
  // A slug already there (an edited study, a form shown again with errors) is the researcher's own.
  let followsTitle = slug.value === "" || slug.value === slugify(title.value);
  title.addEventListener("input", () => {
    if (followsTitle) slug.value = slugify(title.value);
  });
  slug.addEventListener("input", () => {
    followsTitle = slug.value === "" || slug.value === slugify(title.value);
  });
}
