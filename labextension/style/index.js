import './base.css';
import './tryform.css';
import './offers.css';
