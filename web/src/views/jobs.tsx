import { StateBadge, Time } from "../components/ui";
import type { Job } from "../logic/types";

export function JobTable({ jobs }: { jobs: Job[] }) {
  if (jobs.length === 0) return <p>No jobs.</p>;
  return (
    <table>
      <thead><tr><th>Job</th><th>Name</th><th>User</th><th>Share</th><th>State</th><th>Submitted</th></tr></thead>
      <tbody>
        {jobs.map((j) => (
          <tr key={j.id} data-job={j.id}>
            <td><a href={`/jobs/${j.id}`}>#{j.id}</a></td><td>{j.name}</td><td>{j.user}</td><td>{j.share}</td>
            <td><StateBadge state={j.state} /></td><td><Time at={j.submitted_at} /></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
