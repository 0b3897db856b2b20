import { useEffect, useState } from "preact/hooks";

/** Views live after `#` (`#/features/huddle`): one HTML file serves every page and the server needs no fallback. */
export function useHashRoute(): { path: string; query: URLSearchParams } {
  const read = () => {
    const hash = location.hash.replace(/^#/, "") || "/";
    const [path = "/", query = ""] = hash.split("?");
    return { path, query: new URLSearchParams(query) };
  };
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return route;
}

export function navigate(path: string): void {
  location.hash = path;
}
