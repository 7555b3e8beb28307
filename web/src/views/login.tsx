import { useState } from "preact/hooks";
import { apiUrl, ApiError, get } from "../api";
import { signIn, signOut } from "../session";
import type { Who } from "../logic/types";

// The token form. The token is checked with GET /v1/whoami before anything else is shown.
export function Login({ onSignedIn, notice }: { onSignedIn: (who: Who) => void; notice?: string }) {
  const [secret, setSecret] = useState("");
  const [error, setError] = useState(notice);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    signIn(secret.trim());
    try {
      onSignedIn(await get(apiUrl("/v1/whoami")));
    } catch (err) {
      signOut();
      setError(err instanceof ApiError && err.status === 401
        ? "That token is not valid: it is unknown, revoked or expired."
        : err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <h1>Trainyard</h1>
      <form onSubmit={submit}>
        <label for="token">API token</label>
        <input id="token" name="token" type="password" autoComplete="off" required value={secret}
               onInput={(e) => setSecret((e.target as HTMLInputElement).value)} autoFocus />
        <p class="hint">Kept in this tab only (sessionStorage); closing the tab signs you out.
          An admin gets one with <code>trainyard token create</code>; a local cluster's is in <code>.trainyard/admin.token</code>.</p>
        {error && <p class="error" role="alert">{error}</p>}
        <button type="submit" class="primary" disabled={busy}>Sign in</button>
      </form>
    </main>
  );
}
