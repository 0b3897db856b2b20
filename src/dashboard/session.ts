/**
 * Whether this browser signed in and has not signed out (docs/API.md §9): signed out, the dashboard asks nothing
 * that would fail, because a browser logs every 4xx answer as a console error ("Failed to load resource").
 */
const MARKER = "switchyard.signed-in";

export function isMarkedSignedIn(): boolean {
  try {
    return localStorage.getItem(MARKER) === "1";
  } catch {
    // Storage refused (a locked-down profile): ask the service, as before the marker existed.
    return true;
  }
}

export function markSignedIn(): void {
  try {
    localStorage.setItem(MARKER, "1");
  } catch {
    /* nothing to keep */
  }
}

export function forgetSignedIn(): void {
  try {
    localStorage.removeItem(MARKER);
  } catch {
    /* nothing kept */
  }
}
