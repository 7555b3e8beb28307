// The token lives in sessionStorage only: never in a URL, a cookie or localStorage, and it is gone
// when the tab closes.
const key = "trainyard.token";

export function token(): string | null {
  return sessionStorage.getItem(key);
}

export function signIn(secret: string): void {
  sessionStorage.setItem(key, secret);
}

export function signOut(): void {
  sessionStorage.removeItem(key);
}
