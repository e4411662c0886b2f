import { Link } from './link.tsx';

// A log row's lead: a link to the lead's page, or what is left when it has been deleted.

export function LeadLink({
  slug,
  leadId,
  exists,
  name,
}: {
  slug: string;
  leadId: string | null;
  exists: boolean;
  name?: string;
}) {
  if (!leadId) return <>—</>;
  if (!exists) return <span title={leadId}>Deleted lead</span>;
  return <Link to={`/admin/${slug}/leads/${leadId}`}>{name ?? `Lead ${leadId.slice(0, 8)}`}</Link>;
}
