import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { localTime, utcTitle } from "../logic/format";

// A time as the dashboard writes it: local, 24-hour, "2026-11-28 23:41:07" (the zone is named in
// the page footer), UTC on hover.
export function Time({ at }: { at?: string }) {
  if (!at) return <span>—</span>;
  return <time dateTime={at} title={utcTitle(at)}>{localTime(at)}</time>;
}

// A state is written as a word, and coloured too: colour is never the only signal.
export function StateBadge({ state }: { state: string }) {
  return <span class={`badge state-${state.toLowerCase()}`}>{state}</span>;
}

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section aria-label={title}>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

export function ErrorNote({ error }: { error?: string }) {
  return error ? <p class="error" role="alert">{error}</p> : null;
}

export function Bar({ value, max, label }: { value: number; max: number; label: string }) {
  const pct = max > 0 ? Math.min(100, (value / max) * 100) : 0;
  return (
    <div class="bar" role="meter" aria-valuemin={0} aria-valuemax={max} aria-valuenow={value} aria-label={label}>
      <div class="bar-fill" style={{ width: `${pct}%` }} />
    </div>
  );
}

// An action that changes something, behind a confirmation dialog (a real <dialog>: focus is kept
// inside it and Escape cancels). A refusal shows the API's own words in the dialog. `children`:
// more to ask in the dialog (a reason), read by onConfirm.
export function ConfirmButton({ label, question, onConfirm, danger, children }: {
  label: string; question: string; onConfirm: () => Promise<unknown>; danger?: boolean; children?: ComponentChildren;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  useEffect(() => setError(undefined), [label]);
  const confirm = async () => {
    setBusy(true);
    try {
      await onConfirm();
      dialog.current?.close();
      setError(undefined);
    } catch (e) {
      setError(String((e as Error).message ?? e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" class={danger ? "danger" : ""} onClick={() => dialog.current?.showModal()}>{label}</button>
      <dialog ref={dialog} aria-label={label}>
        <p>{question}</p>
        {children}
        {error && <p class="error" role="alert">{error}</p>}
        <div class="actions">
          <button type="button" onClick={() => dialog.current?.close()}>Keep as it is</button>
          <button type="button" class={danger ? "danger" : "primary"} disabled={busy} onClick={confirm}>
            {`Yes, ${label.toLowerCase()}`}
          </button>
        </div>
      </dialog>
    </>
  );
}
