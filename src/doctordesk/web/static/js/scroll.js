// Scroll positions across patches: older items prepended (load more) do not move what the user is reading, and an
// append into a container the user had scrolled to its end keeps it at the end (new messages).

// For each scrolled container: the first item in view and its offset, and a function putting it back there.
export function captureAnchors(root) {
  const restores = [];
  for (const scroller of root.querySelectorAll(".scroller")) {
    const top = scroller.getBoundingClientRect().top;
    const items = [...scroller.querySelectorAll(":scope > [data-id]")].filter((e) => !e.hidden);
    const anchor = items.find((e) => e.getBoundingClientRect().bottom > top + 1);
    const fromBottom = scroller.scrollHeight - scroller.scrollTop;
    if (!anchor) continue;
    const offset = anchor.getBoundingClientRect().top - top;
    restores.push(() => {
      if (anchor.isConnected && scroller.contains(anchor)) {
        scroller.scrollTop += anchor.getBoundingClientRect().top - scroller.getBoundingClientRect().top - offset;
      } else {
        scroller.scrollTop = scroller.scrollHeight - fromBottom;
      }
    });
  }
  return restores;
}

// Before an append into `parent`: a function scrolling its container back to the end when it was at the end.
export function stickyBottom(view, parent) {
  const scroller = scrollerOf(view, parent);
  if (!scroller) return null;
  const atEnd = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 48;
  return atEnd
    ? () => {
        scroller.scrollTop = scroller.scrollHeight;
      }
    : null;
}

function scrollerOf(view, parent) {
  if (parent === null || parent === undefined) return null;
  const entry = view.nodes.get(parent);
  if (!entry) return null;
  let n = entry.host;
  while (n && n !== view.root.parentElement) {
    if (n.classList && n.classList.contains("scroller")) return n;
    n = n.parentElement;
  }
  return null;
}
