import './base.css';
import './offers.css';
