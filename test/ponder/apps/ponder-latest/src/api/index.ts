// Ponder ≥0.8 requires an API file; the RFQ indexer serves nothing of its own (omnigate reads the
// tables), so this is Ponder's GraphQL over the schema, as a new Ponder app has it.
import { db } from 'ponder:api';
import schema from 'ponder:schema';
import { Hono } from 'hono';
import { graphql } from 'ponder';

const app = new Hono();
app.use('/graphql', graphql({ db, schema }));
export default app;
