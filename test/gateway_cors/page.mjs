// The page's script, bundled for the browser by esbuild (test/gateway_cors.sh):
// the AWS SDK for JavaScript v3 as an application loads it, with
// window.runCalls(endpoint, keyId, secret) making the calls the test checks.
import {
  CreateTableCommand, DynamoDBClient, GetItemCommand, ListTablesCommand, PutItemCommand,
} from "@aws-sdk/client-dynamodb";

// CreateTable, PutItem, GetItem; prints what each answered, or the error.
window.runCalls = async (endpoint, accessKeyId, secretAccessKey) => {
  const client = new DynamoDBClient({
    endpoint, region: "us-east-1", credentials: { accessKeyId, secretAccessKey }, maxAttempts: 1,
  });
  try {
    const created = await client.send(new CreateTableCommand({
      TableName: "BrowserNotes",
      AttributeDefinitions: [{ AttributeName: "id", AttributeType: "S" }],
      KeySchema: [{ AttributeName: "id", KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
    }));
    await client.send(new PutItemCommand({
      TableName: "BrowserNotes", Item: { id: { S: "n1" }, text: { S: "from the browser" } },
    }));
    const got = await client.send(new GetItemCommand({ TableName: "BrowserNotes", Key: { id: { S: "n1" } } }));
    return [created.TableDescription.TableName, got.Item.text.S,
      /^[0-9a-f]{32}$/.test(got.$metadata.requestId) ? "request id read" : `request id ${got.$metadata.requestId}`].join("; ");
  } catch (error) {
    return `failed: ${error.name}: ${error.message}`;
  }
};

// ListTables; prints the tables, or the error.
window.listTables = async (endpoint, accessKeyId, secretAccessKey) => {
  const client = new DynamoDBClient({
    endpoint, region: "us-east-1", credentials: { accessKeyId, secretAccessKey }, maxAttempts: 1,
  });
  try {
    return (await client.send(new ListTablesCommand({}))).TableNames.join(",");
  } catch (error) {
    return `failed: ${error.name}: ${error.message}`;
  }
};
