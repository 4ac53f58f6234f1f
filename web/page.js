// Chat page only: pick the interface language from ?lang=fa|tr before the widget starts (the widget itself
// reads data-lang). Kept out of index.html because the page's CSP allows no inline script.
(function () {
  var lang = new URLSearchParams(window.location.search).get("lang");
  if (lang !== "fa" && lang !== "tr") return;
  document.documentElement.lang = lang;
  document.documentElement.dir = lang === "fa" ? "rtl" : "ltr";
  document.getElementById("gpu-advisor-chat").setAttribute("data-lang", lang);
})();
