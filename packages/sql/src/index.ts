export { ParquetEventsWriter, sqlString } from "./parquet.js";
