// The patch operations of docs/protocol.md applied to a JSON element tree. A faithful port of
// screens/protocol.py `apply`: the browser tests check both give the same tree for the same patches.

export const ATTRIBUTE_DEFAULTS = Object.freeze({
  label: null,
  value: null,
  name: null,
  placeholder: null,
  options: null,
  enabled: true,
  visible: true,
  highlighted: false,
  error: null,
  warning: null,
  platform: null,
  action: null,
  props: null,
});

export class PatchError extends Error {}

const hasDefault = (key) => Object.prototype.hasOwnProperty.call(ATTRIBUTE_DEFAULTS, key);

// JSON equality (the values are plain JSON: objects, arrays, strings, numbers, booleans, null).
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]));
}

const clone = (value) => (value === undefined ? undefined : structuredClone(value));

// [siblings, index, parent] of the element `id`, depth first; null when there is none.
export function find(tree, id, parent = null) {
  for (let i = 0; i < tree.length; i++) {
    const e = tree[i];
    if (e.id === id) return [tree, i, parent];
    if (e.children && e.children.length) {
      const hit = find(e.children, id, e);
      if (hit) return hit;
    }
  }
  return null;
}

function mustFind(tree, id) {
  const hit = find(tree, id);
  if (!hit) throw new PatchError(`no element ${JSON.stringify(id)}`);
  return hit;
}

function childrenOf(tree, parent) {
  if (parent === null || parent === undefined) return tree;
  const [siblings, i] = mustFind(tree, parent);
  if (!siblings[i].children) siblings[i].children = [];
  return siblings[i].children;
}

// Applies one patch to `tree` in place.
export function applyOne(tree, patch) {
  switch (patch.op) {
    case "add": {
      const children = childrenOf(tree, patch.parent);
      let index = 0;
      if (patch.after !== null && patch.after !== undefined) {
        index = children.findIndex((e) => e.id === patch.after);
        if (index < 0) throw new PatchError(`no sibling ${JSON.stringify(patch.after)}`);
        index += 1;
      }
      children.splice(index, 0, clone(patch.element));
      break;
    }
    case "append":
      childrenOf(tree, patch.parent).push(...clone(patch.elements));
      break;
    case "prepend":
      childrenOf(tree, patch.parent).unshift(...clone(patch.elements));
      break;
    case "reset":
      tree.splice(0, tree.length, ...clone(patch.elements));
      break;
    case "replace": {
      const [siblings, i] = mustFind(tree, patch.id);
      siblings[i] = clone(patch.element);
      break;
    }
    case "remove": {
      const [siblings, i, parent] = mustFind(tree, patch.id);
      siblings.splice(i, 1);
      // An element without children has no "children" key.
      if (parent && !siblings.length) delete parent.children;
      break;
    }
    case "update": {
      const [siblings, i] = mustFind(tree, patch.id);
      const target = siblings[i];
      for (const [key, value] of Object.entries(patch.set)) {
        if (hasDefault(key) && jsonEqual(value, ATTRIBUTE_DEFAULTS[key])) delete target[key];
        else target[key] = clone(value);
      }
      break;
    }
    default:
      throw new PatchError(`unknown patch op ${JSON.stringify(patch.op)}`);
  }
}

// Applies `patches` to a copy of `elements` and returns it.
export function apply(elements, patches) {
  const tree = clone(elements);
  for (const patch of patches) {
    try {
      applyOne(tree, patch);
    } catch (error) {
      if (error instanceof TypeError) throw new PatchError(`malformed patch ${JSON.stringify(patch)}`);
      throw error;
    }
  }
  return tree;
}

// Every element of a tree, depth first.
export function* walk(elements) {
  for (const e of elements) {
    yield e;
    if (e.children) yield* walk(e.children);
  }
}
