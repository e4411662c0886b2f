import { z } from 'zod';

// The Form page's intake sections (docs/INTAKE.md, "The Form page"; docs/DASHBOARD.md): the
// hosted form's address, its preview and the embed snippet. The form's settings, the publishable
// keys and the connected sources have their own schemas beside their routes.

export const intakeOverviewSchema = z.object({
  ok: z.literal(true),
  formUrl: z.string().meta({ description: "The hosted form's address (PUBLIC_BASE_URL + /forms/<slug>)." }),
  previewPath: z
    .string()
    .meta({ description: 'The same form for an iframe on the dashboard (same origin, embed rendering).' }),
  embedScriptUrl: z.string().meta({ description: 'The embed script (/forms/<slug>/embed.js).' }),
  embedSnippet: z.string().meta({ description: 'The HTML to paste into a site: the target element and the script.' }),
});
export type IntakeOverview = z.infer<typeof intakeOverviewSchema>;
