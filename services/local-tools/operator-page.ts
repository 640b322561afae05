/**
 * The operator page: plain HTML and a little script. It holds no data and no token; the operator
 * pastes the token once (kept in this tab's sessionStorage) and the script sends it as a bearer
 * header. Questions come from a model, so they are shown with textContent, never as HTML.
 */
export const OPERATOR_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Approvals · local-tools</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; max-width: 48rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
  h1 { font-size: 1.3rem; }
  .approval { border: 1px solid #ccc; border-radius: 6px; padding: .75rem 1rem; margin: .75rem 0; }
  .question { white-space: pre-wrap; font-size: 1.05rem; margin: .25rem 0 .5rem; }
  .meta { color: #666; font-size: .85rem; }
  button { font: inherit; padding: .3rem 1rem; margin-right: .5rem; cursor: pointer; }
  #status { color: #a00; min-height: 1.5em; }
  form { display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; }
  input { font: inherit; padding: .3rem; }
</style>
</head>
<body>
<h1>Approvals waiting for a person</h1>
<form id="login">
  <input id="token" type="password" placeholder="operator token" autocomplete="off" size="32">
  <input id="by" placeholder="your name (optional)" size="20">
  <button type="submit">Use</button>
</form>
<p id="status"></p>
<p id="outcome"></p>
<div id="list"></div>
<script>
const $ = (id) => document.getElementById(id);
$("token").value = sessionStorage.getItem("operator-token") || "";
$("by").value = sessionStorage.getItem("operator-name") || "";
$("login").addEventListener("submit", (event) => {
  event.preventDefault();
  sessionStorage.setItem("operator-token", $("token").value.trim());
  sessionStorage.setItem("operator-name", $("by").value.trim());
  refresh();
});
async function api(path, init = {}) {
  const token = sessionStorage.getItem("operator-token") || "";
  const response = await fetch(path, {
    ...init,
    headers: { authorization: "Bearer " + token, "content-type": "application/json" },
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(response.status === 401 ? "the operator token is missing or wrong" : (body.error && body.error.message) || String(response.status));
  return body;
}
function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}
// the outcome has its own line: the list's refresh, which clears #status, must not erase why an answer was refused
async function answer(id, value) {
  try {
    await api("/operator/approvals/" + encodeURIComponent(id), {
      method: "POST",
      body: JSON.stringify({ answer: value, by: sessionStorage.getItem("operator-name") || undefined }),
    });
    $("outcome").textContent = id + ": answered " + value;
  } catch (error) {
    $("outcome").textContent = id + ": " + error.message;
  }
  refresh();
}
async function refresh() {
  if (!sessionStorage.getItem("operator-token")) {
    $("status").textContent = "Enter the operator token (the value of LOCAL_TOOLS_OPERATOR_KEY, or the variable your config names).";
    return;
  }
  try {
    const { approvals } = await api("/operator/approvals");
    $("status").textContent = "";
    const list = $("list");
    list.replaceChildren();
    if (approvals.length === 0) list.append(el("p", "Nothing is waiting.", "meta"));
    for (const approval of approvals) {
      const box = el("div", undefined, "approval");
      box.append(el("div", approval.question, "question"));
      box.append(el("div", approval.id + " · tenant " + approval.tenant_id + " · session " + approval.session_id + " · expires " + new Date(approval.expires_at).toLocaleString(), "meta"));
      const yes = el("button", "Yes");
      const no = el("button", "No");
      yes.addEventListener("click", () => answer(approval.id, "yes"));
      no.addEventListener("click", () => answer(approval.id, "no"));
      box.append(yes, no);
      list.append(box);
    }
  } catch (error) {
    $("status").textContent = error.message;
  }
}
refresh();
setInterval(refresh, 3000);
</script>
</body>
</html>
`;
