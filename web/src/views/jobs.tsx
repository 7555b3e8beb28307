import { StateBadge, Time } from "../components/ui";
import { jobLabel, jobPath, taskCounts } from "../logic/format";
import type { Job } from "../logic/types";

export function JobTable({ jobs }: { jobs: Job[] }) {
  if (jobs.length === 0) return <p>No jobs.</p>;
  return (
    <table>
      <thead><tr><th>Job</th><th>Name</th><th>User</th><th>Share</th><th>State</th><th>Submitted</th></tr></thead>
      <tbody>
        {jobs.map((j) => (
          <tr key={j.id} data-job={j.id}>
            <td><a href={jobPath(j)}>#{jobLabel(j)}</a></td><td>{j.name}</td><td>{j.user}</td><td>{j.share}</td>
            <td>
              <StateBadge state={j.state} />
              {j.array?.counts && <span class="muted" data-task-counts> {taskCounts(j.array.counts)}</span>}
            </td>
            <td><Time at={j.submitted_at} /></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
