'use client';

export interface PickerItem {
  value: string;
  label: string;
}

/** A labelled multiple choice of the form's lists (vaults, files, memory stores): one shape for all. */
export function MultiPicker({ label, testId, items, value, onChange, empty, title }: { label: string; testId: string; items: readonly PickerItem[]; value: string[]; onChange: (values: string[]) => void; empty: string; title: string }) {
  return (
    <label>
      <span className="muted small">{label}</span>
      <select
        multiple
        data-testid={testId}
        value={value}
        disabled={items.length === 0}
        size={Math.max(1, Math.min(3, items.length))}
        title={`${title}; hold Ctrl or ⌘ to pick more than one`}
        onChange={(e) => onChange(Array.from(e.target.selectedOptions, (o) => o.value))}
      >
        {items.length === 0 ? (
          <option value="" disabled>
            {empty}
          </option>
        ) : (
          items.map((i) => (
            <option key={i.value} value={i.value}>
              {i.label}
            </option>
          ))
        )}
      </select>
    </label>
  );
}
